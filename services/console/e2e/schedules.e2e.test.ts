/**
 * The Schedules page in real headless Chromium against a real cluster: a schedule written with
 * the API and triggered once shows its spec, zone and next slot in local time; its Slots dialog
 * lists the next slots and the ledger row of the triggered run; pause and resume from the row;
 * reached from the navigation by keyboard, the dialog closed with Escape; axe-core finds no
 * serious or critical violation. Screenshots: services/console/artifacts/schedules*.png.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { KEYS, closeAfterFile, openConsolePage, screenshot, seriousViolations, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

describe('the Schedules page', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    c = await startConsoleCluster();
    ({ browser, page } = await openConsolePage());
    await signIn(page, c.baseUrl, KEYS.admin);
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));

  it('shows a schedule, its next slots and its ledger, and pauses and resumes it', async () => {
    const def = await c.admin.definitions.create({
      name: 'nightly',
      graph: { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] },
    });
    const s = await c.admin.schedules.upsert({ key: 'nightly-report', definitionId: def.id, spec: { cron: '30 2 * * *', timezone: 'America/New_York' } });
    const t = await c.admin.schedules.trigger(s.id);

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Schedules' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
    const row = page.locator('tr[data-schedule-key="nightly-report"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('America/New_York');
    expect(await row.textContent()).toMatch(/T0[23]:[03]0:00-0[45]:00/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'schedules');

    await page.getByRole('button', { name: 'Slots of nightly-report' }).click();
    const dialog = page.getByRole('dialog', { name: 'Slots of nightly-report' });
    await dialog.locator('tr[data-outcome="started"]').waitFor();
    expect(await dialog.getByRole('list', { name: 'Next slots' }).locator('li').count()).toBe(5);
    expect(await dialog.getByRole('table', { name: 'Slot ledger' }).textContent()).toContain('trigger');
    expect(t.runId).toEqual(expect.any(String));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'schedules-slots');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Pause nightly-report' }).click();
    await page.getByRole('button', { name: 'Resume nightly-report' }).waitFor();
    expect((await c.admin.schedules.get(s.id)).paused).toBe(true);
    await page.getByRole('button', { name: 'Resume nightly-report' }).click();
    await page.getByRole('button', { name: 'Pause nightly-report' }).waitFor();
    expect((await c.admin.schedules.get(s.id)).paused).toBe(false);
  }, 90_000);
});
