/**
 * The Audit log page in real headless Chromium against a real cluster: writes made with the API
 * (one of them refused) show as rows naming the principal, action, resource and outcome; the
 * action filter narrows them; "Verify chain" reports the chain intact; reached from the
 * navigation by keyboard; axe-core finds no serious or critical violation. Screenshots:
 * services/console/artifacts/audit*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

describe('the Audit log page', () => {
  const s = consoleSession();

  it('lists the writes, refusals included, filters them by action and verifies the chain', async () => {
    const def = await s.c.admin.definitions.create({
      name: 'audited',
      graph: { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] },
    });
    await s.c.admin.definitions.disable(def.id);
    const refused = await s.c.admin.send('POST', '/v1/runs/00000000-0000-4000-8000-000000000000/cancel', { body: {} });
    expect(refused.status).toBe(404);

    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    const created = s.page.locator('tr[data-audit-action="definition.create"]');
    await created.waitFor();
    expect(await created.textContent()).toContain(def.id);
    expect(await created.textContent()).toContain('201');
    const cancel = s.page.locator('tr[data-audit-action="run.cancel"]');
    expect(await cancel.textContent()).toContain('404');
    expect(await cancel.textContent()).toContain('NotFound');
    const principal = (await s.c.admin.whoami()).principal;
    expect(await created.textContent()).toContain(principal);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'audit');

    await s.page.getByLabel('Action').fill('definition.*');
    await s.page.getByRole('button', { name: 'Apply filters' }).click();
    await cancel.waitFor({ state: 'detached' });
    // the filtered page replaces the list (a skeleton between): wait for its rows
    await created.waitFor();
    const actions = await s.page.locator('tr[data-audit-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-audit-action')));
    expect(actions.sort()).toEqual(['definition.create', 'definition.disable']);

    await s.page.getByRole('button', { name: 'Verify chain' }).click();
    const verdict = s.page.getByRole('status').filter({ hasText: 'Chain' });
    await verdict.waitFor();
    expect(await verdict.textContent()).toMatch(/^Chain intact: \d+ rows checked/);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'audit-filtered');
  }, 90_000);
});
