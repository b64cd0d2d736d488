/**
 * The Schedules page in real headless Chromium against a real cluster: a schedule written with
 * the API and triggered once shows its spec, zone and next slot in local time; its Slots dialog
 * lists the next slots and the ledger row of the triggered run; pause and resume from the row;
 * reached from the navigation by keyboard, the dialog closed with Escape; axe-core finds no
 * serious or critical violation. Screenshots: services/console/artifacts/schedules*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

describe('the Schedules page', () => {
  const s = consoleSession();

  it('shows a schedule, its next slots and its ledger, and pauses and resumes it', async () => {
    const def = await s.c.admin.definitions.create({
      name: 'nightly',
      graph: { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] },
    });
    const sched = await s.c.admin.schedules.upsert({ key: 'nightly-report', definitionId: def.id, spec: { cron: '30 2 * * *', timezone: 'America/New_York' } });
    const t = await s.c.admin.schedules.trigger(sched.id);

    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Schedules' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
    const row = s.page.locator('tr[data-schedule-key="nightly-report"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('America/New_York');
    expect(await row.textContent()).toMatch(/T0[23]:[03]0:00-0[45]:00/);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'schedules');

    await s.page.getByRole('button', { name: 'Slots of nightly-report' }).click();
    const dialog = s.page.getByRole('dialog', { name: 'Slots of nightly-report' });
    await dialog.locator('tr[data-outcome="started"]').waitFor();
    expect(await dialog.getByRole('list', { name: 'Next slots' }).locator('li').count()).toBe(5);
    expect(await dialog.getByRole('table', { name: 'Slot ledger' }).textContent()).toContain('trigger');
    expect(t.runId).toEqual(expect.any(String));
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'schedules-slots');
    await s.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await s.page.getByRole('button', { name: 'Pause nightly-report' }).click();
    await s.page.getByRole('button', { name: 'Resume nightly-report' }).waitFor();
    expect((await s.c.admin.schedules.get(sched.id)).paused).toBe(true);
    await s.page.getByRole('button', { name: 'Resume nightly-report' }).click();
    await s.page.getByRole('button', { name: 'Pause nightly-report' }).waitFor();
    expect((await s.c.admin.schedules.get(sched.id)).paused).toBe(false);
  }, 90_000);
});
