/**
 * The Audit log page in real headless Chromium against a real cluster: writes made with the API
 * (one of them refused) show as rows naming the principal, action, resource and outcome; the
 * action filter narrows them; "Verify chain" reports the chain intact; reached from the
 * navigation by keyboard; axe-core finds no serious or critical violation. Screenshots:
 * services/console/artifacts/audit*.png.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { KEYS, closeAfterFile, openConsolePage, screenshot, seriousViolations, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

describe('the Audit log page', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    c = await startConsoleCluster();
    ({ browser, page } = await openConsolePage());
    await signIn(page, c.baseUrl, KEYS.admin);
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));

  it('lists the writes, refusals included, filters them by action and verifies the chain', async () => {
    const def = await c.admin.definitions.create({
      name: 'audited',
      graph: { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] },
    });
    await c.admin.definitions.disable(def.id);
    const refused = await c.admin.send('POST', '/v1/runs/00000000-0000-4000-8000-000000000000/cancel', { body: {} });
    expect(refused.status).toBe(404);

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    const created = page.locator('tr[data-audit-action="definition.create"]');
    await created.waitFor();
    expect(await created.textContent()).toContain(def.id);
    expect(await created.textContent()).toContain('201');
    const cancel = page.locator('tr[data-audit-action="run.cancel"]');
    expect(await cancel.textContent()).toContain('404');
    expect(await cancel.textContent()).toContain('NotFound');
    const principal = (await c.admin.whoami()).principal;
    expect(await created.textContent()).toContain(principal);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'audit');

    await page.getByLabel('Action').fill('definition.*');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await cancel.waitFor({ state: 'detached' });
    // the filtered page replaces the list (a skeleton between): wait for its rows
    await created.waitFor();
    const actions = await page.locator('tr[data-audit-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-audit-action')));
    expect(actions.sort()).toEqual(['definition.create', 'definition.disable']);

    await page.getByRole('button', { name: 'Verify chain' }).click();
    const verdict = page.getByRole('status').filter({ hasText: 'Chain' });
    await verdict.waitFor();
    expect(await verdict.textContent()).toMatch(/^Chain intact: \d+ rows checked/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'audit-filtered');
  }, 90_000);
});
