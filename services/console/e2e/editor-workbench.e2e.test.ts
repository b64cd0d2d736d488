/**
 * The editor as a workbench, in real headless Chromium against a real cluster: two saved
 * versions compared side by side from the version list (removed, added and changed nodes
 * marked on their side, the member-by-member changes listed, a change picked in the list
 * selects its node on both canvases and brings it into view at a legible zoom). axe-core finds no serious or critical violation.
 * Screenshots: artifacts/workbench-*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

const v1 = {
  nodes: [
    { key: 'start', kind: 'Start', position: { x: 0, y: 0 } },
    { key: 'echo', kind: 'Tool', config: { toolName: 'echo', arguments: { said: 'hi' } }, position: { x: 300, y: 0 } },
    { key: 'gate', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] }, position: { x: 600, y: 0 } },
    { key: 'end', kind: 'End', config: { outcome: 'done' }, position: { x: 900, y: 0 } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'echo' },
    { key: 'e2', from: 'echo', to: 'gate' },
    { key: 'e3', from: 'gate', to: 'end' },
  ],
};
const v2 = {
  nodes: [
    { key: 'start', kind: 'Start', position: { x: 0, y: 0 } },
    { key: 'echo', kind: 'Tool', config: { toolName: 'echo', arguments: { said: 'hello' } }, position: { x: 300, y: 0 } },
    { key: 'after', kind: 'Tool', config: { toolName: 'echo', arguments: { shipped: true } }, position: { x: 600, y: 0 } },
    { key: 'end', kind: 'End', config: { outcome: 'done' }, position: { x: 900, y: 0 } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'echo' },
    { key: 'e2b', from: 'echo', to: 'after' },
    { key: 'e3b', from: 'after', to: 'end' },
  ],
};

describe('the editor workbench', () => {
  const s = consoleSession();

  it('compares two saved versions side by side, marking what was removed, added and changed', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'compared', graph: v1 });
    await s.c.admin.definitions.update(def.id, { graph: v2, version: 1 });
    await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${def.id}&panel=versions`);
    const form = page.getByRole('form', { name: 'Compare two versions' });
    await form.waitFor();
    expect(await form.getByLabel('Compare').inputValue()).toBe('1');
    expect(await form.getByLabel('with').inputValue()).toBe('2');
    await form.getByRole('button', { name: 'Show diff' }).click();

    const before = page.getByRole('region', { name: 'v1 (before)' });
    const after = page.getByRole('region', { name: 'v2 (after)' });
    await after.locator('.node-card[data-node-key="after"]').waitFor();
    const marks = (side: typeof before) =>
      side.locator('.node-card').evaluateAll((cs) => Object.fromEntries(cs.map((c) => [c.getAttribute('data-node-key'), c.getAttribute('data-diff')])));
    expect(await marks(before)).toEqual({ start: null, echo: 'changed', gate: 'removed', end: null });
    expect(await marks(after)).toEqual({ start: null, echo: 'changed', after: 'added', end: null });
    expect(await after.locator('.react-flow__edge.diff-added').count()).toBe(2);
    expect(page.url()).toContain('diffFrom=1');
    expect(page.url()).toContain('diffTo=2');

    const list = page.getByRole('complementary', { name: 'Changes' });
    expect(await list.getByTestId('diff-summary').innerText()).toBe('7 changes.');
    const echo = list.locator('li[data-node="echo"]');
    expect(await echo.innerText()).toContain('config.arguments: {"said":"hi"} → {"said":"hello"}');
    // picking a change selects its node on both sides
    await list.locator('li[data-node="echo"] button').click();
    await before.locator('.node-card.is-selected[data-node-key="echo"]').waitFor();
    await after.locator('.node-card.is-selected[data-node-key="echo"]').waitFor();
    // and centres both sides on it at a legible zoom
    await expect.poll(async () => (await after.locator('.node-card[data-node-key="echo"]').boundingBox())?.width).toBeGreaterThan(200);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workbench-diff');

    await page.getByRole('button', { name: 'Close the diff' }).click();
    await page.locator('.editor-body .react-flow__node[data-id="after"]').waitFor();
    expect(page.url()).not.toContain('diffFrom');
  });
});
