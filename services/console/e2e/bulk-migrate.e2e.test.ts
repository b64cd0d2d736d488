/**
 * A bulk migrate from the runs list in real headless Chromium against a real cluster (the
 * dispatchers work the job): runs of a definition filtered by it, "Migrate" with a target
 * version and a canary share, the job pausing after its canary with the reason and a Resume
 * button, then ending with the run that cannot move (parked on a node the new version removed)
 * listed with its reason. Screenshots: services/console/artifacts/bulk-migrate*.png.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pauseMigrationPair } from '@flowline/testing';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

describe('a bulk migrate from the runs list', () => {
  const s = consoleSession();

  it('migrates a canary, pauses with the reason, resumes, and lists the refused run with its reason', async () => {
    const { before, after } = pauseMigrationPair();
    const def = await s.c.admin.definitions.create({ name: 'migrating', graph: before });
    const runs = [];
    for (let i = 0; i < 4; i++) runs.push((await s.c.admin.runs.start(def.id, { input: {} })).runId);
    const parkedOn = async (runId: string, key: string) =>
      expect.poll(async () => (await s.c.admin.runs.get(runId)).nodeRuns.find((n) => n.nodeKey === key)?.status, { timeout: 30_000 }).toBe('WaitingForApproval');
    for (const id of runs) await parkedOn(id, 'p');
    // one run goes on to q, which version 2 removes: it cannot move
    await s.c.admin.runs.decide(runs[0]!, 'p', { operationId: randomUUID(), decision: 'Approve' });
    await parkedOn(runs[0]!, 'q');
    await s.c.admin.definitions.update(def.id, { graph: after, version: 1 });

    await s.page.goto(`${s.c.baseUrl}/console/runs?definitionId=${def.id}`);
    for (const id of runs) await s.page.locator(`tr[data-run-id="${id}"]`).waitFor({ timeout: 30_000 });
    await s.page.getByRole('button', { name: 'Act on matching runs…' }).click();
    const dialog = s.page.getByRole('dialog');
    await dialog.getByRole('radio', { name: /Migrate/ }).check();
    await dialog.getByLabel('Target version').fill('2');
    await dialog.getByLabel('Canary %').fill('25');
    await dialog.getByLabel('Max error rate %').fill('90');
    await dialog.getByText('4 runs would be affected.').waitFor({ timeout: 30_000 });
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'bulk-migrate-form');
    await dialog.getByRole('button', { name: 'Migrate 4 runs' }).click();

    await dialog.locator('[data-bulk-status="Paused"]').waitFor({ timeout: 60_000 });
    expect(await dialog.getByTestId('bulk-paused').textContent()).toContain('Paused after the canary');
    expect(await dialog.getByRole('status').filter({ hasText: 'remaining' }).textContent()).toMatch(/(1 migrated · 0 refused|0 migrated · 1 refused) · 3 remaining/);
    await screenshot(s.page, 'bulk-migrate-paused');
    await dialog.getByRole('button', { name: 'Resume' }).click();
    await dialog.locator('[data-bulk-status="Completed"]').waitFor({ timeout: 60_000 });
    await dialog.getByText('3 migrated · 1 refused · 0 remaining').waitFor({ timeout: 10_000 });
    const refused = dialog.getByTestId('bulk-refused');
    await refused.locator('li').waitFor({ timeout: 10_000 });
    expect(await refused.textContent()).toContain(runs[0]!.slice(0, 8));
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'bulk-migrate-done');
    for (const id of runs) await s.c.admin.runs.cancel(id);
  }, 180_000);
});
