/**
 * The approvals inbox in real headless Chromium against a real cluster: runs parked on a
 * Pause are listed (the longest waiting first) with what they ask, their node, run,
 * definition and how long they have waited; a run parked on a Wait node (WaitingForApproval
 * too, but waiting on the world, not a person) and a finished run are not. Reached from the
 * navigation by keyboard; "Decide" opens the run view's decision panel; once approved there,
 * the item leaves the inbox. axe-core: no serious or critical violation. Screenshots:
 * artifacts/approvals-*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

const pauseGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'review', kind: 'Pause', config: { prompt: 'Ship it?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'end', kind: 'End', config: { outcome: 'shipped' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'review' },
    { key: 'e2', from: 'review', to: 'end' },
  ],
};

const waitGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'nap', kind: 'Wait', config: { for: 'PT1H' } },
    { key: 'end', kind: 'End', config: { outcome: 'rested' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'nap' },
    { key: 'e2', from: 'nap', to: 'end' },
  ],
};

describe('the approvals inbox', () => {
  const s = consoleSession();

  const statusOf = async (runId: string) => (await s.c.admin.runs.get(runId)).run.status;

  it('lists the nodes waiting for a person, not runs parked on a Wait; Decide opens the decision panel; a decided item leaves', async () => {
    const pause = (await s.c.admin.definitions.create({ name: 'ship', graph: pauseGraph })).id;
    const wait = (await s.c.admin.definitions.create({ name: 'nap', graph: waitGraph })).id;
    const first = (await s.c.admin.runs.start(pause, { input: {} })).runId;
    await expect.poll(() => statusOf(first), { timeout: 30_000 }).toBe('WaitingForApproval');
    const second = (await s.c.admin.runs.start(pause, { input: {} })).runId;
    const napping = (await s.c.admin.runs.start(wait, { input: {} })).runId;
    const finished = (await s.c.admin.runs.start(pause, { input: {} })).runId;
    for (const r of [second, napping, finished]) await expect.poll(() => statusOf(r), { timeout: 30_000 }).toBe('WaitingForApproval');
    await s.c.admin.runs.decide(finished, 'review', { operationId: crypto.randomUUID(), decision: 'Approve' });
    await expect.poll(() => statusOf(finished), { timeout: 30_000 }).toBe('Completed');

    // from the navigation, by keyboard
    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Approvals' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    const rows = s.page.locator('tr[data-approval-run]');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    // the longest waiting first; the Wait-parked and the finished run are not listed
    expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-approval-run')))).toEqual([first, second]);
    const row = s.page.locator(`tr[data-approval-run="${first}"]`);
    expect(await row.getAttribute('data-decision-kind')).toBe('Approve');
    const text = await row.innerText();
    expect(text).toContain('a decision');
    expect(text).toContain('review');
    expect(text).toContain('ship');
    expect(text).toContain(first.slice(0, 8));
    // how long it has waited ticks
    const waited = row.locator('td').nth(4);
    const before = await waited.innerText();
    await expect.poll(() => waited.innerText(), { timeout: 5_000 }).not.toBe(before);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'approvals-inbox');

    // Decide, by keyboard: the run view with the node's decision panel
    await row.getByRole('link', { name: `Decide review of run ${first.slice(0, 8)}` }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.waitForURL(/\/console\/run\?/);
    const panel = s.page.locator('[data-node-panel="review"]');
    await panel.getByText('Ship it?').waitFor({ timeout: 15_000 });
    await panel.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => statusOf(first), { timeout: 30_000 }).toBe('Completed');

    await s.page.goBack();
    await s.page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-approval-run'))), { timeout: 20_000 }).toEqual([second]);
    await s.c.admin.runs.cancel(napping);
    await s.c.admin.runs.cancel(second);
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(0);
    await s.page.getByText('Nothing waits for a person').waitFor();
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'approvals-empty');
  }, 150_000);
});
