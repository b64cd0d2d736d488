/**
 * The editor as a workbench, in real headless Chromium against a real cluster: two saved
 * versions compared side by side from the version list (removed, added and changed nodes
 * marked on their side, the member-by-member changes listed, a change picked in the list
 * selects its node on both canvases and brings it into view at a legible zoom); undo and redo
 * of a removal and of a drag by keyboard (Ctrl+Z, Ctrl+Shift+Z) and by the toolbar's buttons,
 * back to "saved" when undone to what is stored; Ctrl+S saving; Escape clearing the selection;
 * `?` opening the shortcut sheet (not while typing in a field); finding a node by key or label
 * (Ctrl+K or /) in a 150-node graph and jumping to it, and the same in the run graph; the one Start dialog (definitions page
 * and editor) drawing a form from the Start's input schema, each field's error under it, the run
 * started with what the form holds. axe-core finds no serious or critical violation.
 * Screenshots: artifacts/workbench-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

const card = (page: Page, key: string) => page.locator(`.editor-body .react-flow__node[data-id="${key}"]`);
const status = (page: Page) => page.getByTestId('editor-status').innerText();
/** 150 Tools in a chain between a Start and an End. */
const chain = (n: number) => ({
  nodes: [
    { key: 'start', kind: 'Start' },
    ...Array.from({ length: n }, (_, i) => ({ key: `n${i}`, label: `Step ${i}`, kind: 'Tool', config: { toolName: 'echo' } })),
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e-start', from: 'start', to: 'n0' },
    ...Array.from({ length: n - 1 }, (_, i) => ({ key: `e${i}`, from: `n${i}`, to: `n${i + 1}` })),
    { key: 'e-end', from: `n${n - 1}`, to: 'end' },
  ],
});

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
    expect(await seriousViolations(page)).toEqual([]);
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

  it('undoes and redoes graph edits by keyboard and buttons, saves with Ctrl+S, clears the selection with Escape, shows the shortcut sheet', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'undoable', graph: v1 });
    await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${def.id}`);
    await card(page, 'gate').waitFor();
    const undoButton = page.getByRole('button', { name: 'Undo' });
    const redoButton = page.getByRole('button', { name: 'Redo' });
    expect(await undoButton.isDisabled()).toBe(true);
    expect(await redoButton.isDisabled()).toBe(true);

    // a removal, undone by keyboard: back to what is stored
    await card(page, 'gate').click();
    await page.keyboard.press('Delete');
    await card(page, 'gate').waitFor({ state: 'detached' });
    await expect.poll(() => status(page)).toContain('unsaved changes');
    await page.keyboard.press('Control+Z');
    await card(page, 'gate').waitFor();
    await expect.poll(() => status(page)).toBe('v1 · saved');
    await page.keyboard.press('Control+Shift+Z');
    await card(page, 'gate').waitFor({ state: 'detached' });
    // and by the buttons
    await undoButton.click();
    await card(page, 'gate').waitFor();
    await redoButton.click();
    await card(page, 'gate').waitFor({ state: 'detached' });
    await undoButton.click();
    await card(page, 'gate').waitFor();

    // a drag is one step
    const before = (await card(page, 'echo').boundingBox())!;
    await page.mouse.move(before.x + 60, before.y + 20);
    await page.mouse.down();
    await page.mouse.move(before.x + 110, before.y + 160, { steps: 12 });
    await page.mouse.up();
    await expect.poll(async () => (await card(page, 'echo').boundingBox())!.y).toBeGreaterThan(before.y + 100);
    await expect.poll(() => undoButton.isEnabled()).toBe(true);
    await page.keyboard.press('Control+Z');
    await expect.poll(async () => Math.round((await card(page, 'echo').boundingBox())!.y)).toBe(Math.round(before.y));
    await expect.poll(() => status(page)).not.toContain('unsaved');

    // Ctrl+S saves the redone drag as v2
    await page.keyboard.press('Control+Shift+Z');
    await expect.poll(() => status(page)).toContain('unsaved changes');
    await page.keyboard.press('Control+S');
    await expect.poll(() => status(page)).toContain('v2 · saved');
    expect((await s.c.admin.definitions.get(def.id)).version).toBe(2);

    // Escape clears the selection
    await card(page, 'end').click();
    await page.locator('.node-card.is-selected[data-node-key="end"]').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.node-card.is-selected').waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('node')).toBeNull();

    // `?` while typing in a field is text; elsewhere it opens the sheet, Escape closes it
    await page.getByLabel('Definition name').click();
    await page.keyboard.press('End');
    await page.keyboard.type('?');
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.keyboard.press('Backspace');
    await page.locator('.editor-body .react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.waitFor();
    expect(await sheet.getByRole('table', { name: 'Editor shortcuts' }).innerText()).toContain('Ctrl+Shift+Z');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workbench-shortcuts');
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
  }, 90_000);

  it('finds a node of a 150-node graph by key or label and jumps to it, in the editor and in a run of it', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'long chain', graph: chain(150) });
    await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${def.id}`);
    await page.locator('.editor-body .react-flow__node').first().waitFor();
    await page.locator('.editor-body .react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+K');
    const find = page.getByRole('dialog', { name: 'Find a node' });
    await find.waitFor();
    await find.getByRole('combobox', { name: 'Key or label' }).fill('step 14');
    const options = find.getByRole('option');
    // "Step 14" itself, then the labels starting with it (Step 140 … 149)
    await expect.poll(() => options.count()).toBe(11);
    expect(await options.first().getAttribute('data-node-key')).toBe('n14');
    await page.keyboard.press('ArrowDown');
    expect(await find.getByRole('option', { selected: true }).getAttribute('data-node-key')).toBe('n140');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workbench-find');
    await page.keyboard.press('Enter');
    await find.waitFor({ state: 'detached' });
    const picked = page.locator('.node-card.is-selected[data-node-key="n140"]');
    await picked.waitFor();
    await page.locator('.inspector-head h2', { hasText: 'Step 140' }).waitFor();
    expect(new URL(page.url()).searchParams.get('node')).toBe('n140');
    // in view, at a legible size
    await expect.poll(async () => {
      const [canvas, box] = await Promise.all([page.locator('.editor-body .canvas').boundingBox(), picked.boundingBox()]);
      return !!canvas && !!box && box.width >= 200 && box.x >= canvas.x && box.x + box.width <= canvas.x + canvas.width && box.y >= canvas.y && box.y + box.height <= canvas.y + canvas.height;
    }).toBe(true);
    await screenshot(page, 'workbench-jumped');

    // '/' opens it too; a query no node holds says so
    await page.locator('.editor-body .react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('/');
    await find.waitFor();
    await find.getByRole('combobox').fill('nothing-like-this');
    await find.getByText('No node matches.').waitFor();
    await page.keyboard.press('Escape');
    await find.waitFor({ state: 'detached' });

    // a run of it: the run graph's "Find node" selects the node and brings it into view
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('button', { name: 'Find node' }).click();
    const inRun = page.getByRole('dialog', { name: 'Find a node' });
    await inRun.getByRole('combobox', { name: 'Key or label' }).fill('n77');
    await page.keyboard.press('Enter');
    await inRun.waitFor({ state: 'detached' });
    await expect.poll(() => new URL(page.url()).searchParams.get('nodeKey')).toBe('n77');
    const found = page.locator('.graph-card .react-flow__node[data-id="n77"]');
    await expect.poll(async () => {
      const [card, box] = await Promise.all([page.locator('.graph-card').boundingBox(), found.boundingBox()]);
      return !!card && !!box && box.x >= card.x && box.x + box.width <= card.x + card.width && box.y >= card.y && box.y + box.height <= card.y + card.height;
    }).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workbench-run-find');
  }, 90_000);

  it('starts a run from a form generated from the input schema, on the definitions page and in the editor', async () => {
    const page = s.page;
    const schema = {
      type: 'object',
      required: ['customer', 'qty'],
      properties: {
        customer: { type: 'string', title: 'Customer', minLength: 2 },
        qty: { type: 'integer', title: 'Quantity', minimum: 1 },
        express: { type: 'boolean', title: 'Express shipping' },
        region: { type: 'string', title: 'Region', enum: ['eu', 'us'] },
      },
    };
    const graph = {
      nodes: [
        { key: 'start', kind: 'Start', config: { inputSchema: schema } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'end' }],
    };
    const def = await s.c.admin.definitions.create({ name: 'schema form', graph });
    await page.goto(`${s.c.baseUrl}/console/definitions`);
    await page.getByRole('link', { name: 'Start run of schema form' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start “schema form”' });
    await dialog.getByTestId('schema-form').waitFor();
    await dialog.getByRole('button', { name: 'Start run' }).click();
    // each field's error under it; nothing sent
    await dialog.locator('.has-error').first().waitFor();
    expect(await dialog.locator('.has-error').count()).toBe(2);
    const errorOf = (member: string) => dialog.locator(`[id$="_${member}__error"]`);
    expect(await errorOf('customer').innerText()).toContain('is required');
    expect((await s.c.admin.runs.list({ definitionId: def.id })).items).toHaveLength(0);
    await dialog.getByLabel(/Customer/).fill('a');
    await dialog.getByLabel(/Quantity/).fill('0');
    await expect.poll(() => errorOf('qty').innerText()).toContain('0 is less than 1');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workbench-start-form-errors');
    await dialog.getByLabel(/Customer/).fill('acme');
    await dialog.getByLabel(/Quantity/).fill('3');
    await dialog.getByLabel(/Express shipping/).check();
    await dialog.getByLabel(/Region/).selectOption('eu');
    await expect.poll(() => dialog.locator('.has-error').count()).toBe(0);
    await screenshot(page, 'workbench-start-form');
    await dialog.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/console\/run\?runId=/);
    const runId = new URL(page.url()).searchParams.get('runId')!;
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    expect((await s.c.admin.runs.node(runId, 'start')).input?.run.input).toEqual({ customer: 'acme', qty: 3, express: true, region: 'eu' });

    // the editor's Start opens the same dialog
    await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${def.id}`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const again = page.getByRole('dialog', { name: 'Start “schema form”' });
    await again.getByTestId('schema-form').waitFor();
    await again.getByRole('radio', { name: 'JSON' }).check();
    await again.getByLabel('Run input (JSON)').fill('{"customer": "x"}');
    expect(await again.getByRole('list', { name: 'Input problems' }).innerText()).toContain('.qty is required');
    expect(await again.getByRole('button', { name: 'Start run' }).isDisabled()).toBe(true);
    await page.keyboard.press('Escape');
    await again.waitFor({ state: 'detached' });
  }, 90_000);
});
