/**
 * The migrate dialog in real headless Chromium against a real cluster: a run parked on a Pause
 * of v1; v2 adds a node after the Pause, v3 replaces the Pause with a Tool. The dialog's dry run
 * to v3 shows `incompatible` with its keyed reason and leaves Execute disabled (the run is not
 * touched); the dry run to v2 shows `compatible` with one row per node (the new node "add"),
 * and Execute moves the run: the run page then names v2 and draws the added node, and the
 * approval completes the run through it. A version that renamed the live Pause asks for a
 * mapping; with `p: gate` it is compatible and executed. A read-only key is offered no "Migrate…". axe-core
 * finds no serious or critical violation with the plan shown. Screenshots: artifacts/migrate-*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, KEYS, screenshot, seriousViolations, signIn } from './console-cluster';

const pause = { key: 'p', kind: 'Pause', config: { prompt: 'ship it?', allowedDecisions: ['Approve', 'Reject'] } };
const v1 = {
  nodes: [{ key: 'start', kind: 'Start' }, pause, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [
    { key: 'e1', from: 'start', to: 'p' },
    { key: 'e2', from: 'p', to: 'end' },
  ],
};
const v2 = {
  nodes: [{ key: 'start', kind: 'Start' }, pause, { key: 'after', kind: 'Tool', config: { toolName: 'echo', arguments: { shipped: true } } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [
    { key: 'e1', from: 'start', to: 'p' },
    { key: 'e2b', from: 'p', to: 'after' },
    { key: 'e3', from: 'after', to: 'end' },
  ],
};
const v3 = {
  nodes: [{ key: 'start', kind: 'Start' }, { key: 'p', kind: 'Tool', config: { toolName: 'echo' } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
  edges: [
    { key: 'e1', from: 'start', to: 'p' },
    { key: 'e2', from: 'p', to: 'end' },
  ],
};

describe('the migrate dialog', () => {
  const s = consoleSession();

  it('dry-runs before executing: refuses an incompatible version with its reasons, moves the run to a compatible one', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'shipping', graph: v1 });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');
    await s.c.admin.definitions.update(def.id, { graph: v2, version: 1 });
    await s.c.admin.definitions.update(def.id, { graph: v3, version: 2 });

    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('group', { name: 'Run actions' }).getByRole('button', { name: 'Migrate…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Migrate this run' });
    const execute = dialog.getByRole('button', { name: 'Execute migration' });
    const version = dialog.getByLabel('Target version');
    await version.locator('option').first().waitFor({ state: 'attached' });
    // the newest other version is proposed; nothing is executable before a dry run
    expect(await version.inputValue()).toBe('3');
    expect(await execute.isDisabled()).toBe(true);

    // incompatible: the reasons, Execute stays off, the run is untouched
    await dialog.getByRole('button', { name: 'Dry run' }).click();
    const plan = dialog.locator('.migration-plan');
    await plan.waitFor();
    expect(await plan.getAttribute('data-verdict')).toBe('incompatible');
    expect(await dialog.getByRole('list', { name: 'Reasons' }).innerText()).toContain('p');
    expect(await execute.isDisabled()).toBe(true);
    expect(await dialog.innerText()).toContain('Only a compatible plan can be executed');
    await screenshot(page, 'migrate-incompatible');
    expect((await s.c.admin.runs.get(runId)).run.definitionVersion).toBe(1);

    // changing the target drops the plan shown: a new dry run is needed
    await version.selectOption('2');
    await plan.waitFor({ state: 'detached' });
    expect(await execute.isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => plan.getAttribute('data-verdict')).toBe('compatible');
    const rows = dialog.getByRole('table', { name: 'Node mapping' }).locator('tbody tr');
    expect(await rows.evaluateAll((rs) => rs.map((r) => `${r.getAttribute('data-from')}→${r.getAttribute('data-to')}:${r.getAttribute('data-action')}`)).then((x) => x.sort())).toEqual(
      ['→after:add', 'end→end:carry', 'p→p:keep', 'start→start:carry'].sort(),
    );
    expect((await s.c.admin.runs.get(runId)).run.definitionVersion).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'migrate-dry-run');

    await execute.click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.run-meta').getByRole('link', { name: 'v2' }).waitFor({ timeout: 15_000 });
    await page.locator('.graph-card .graph-node[data-node-key="after"]').waitFor({ timeout: 15_000 });
    // the new graph is drawn anew and laid out: every node of v2 in view and none under another
    const seen = () =>
      page.evaluate(() => {
        const card = document.querySelector('.graph-card')!.getBoundingClientRect();
        const boxes = [...document.querySelectorAll<HTMLElement>('.graph-card .react-flow__node')].map((n) => ({ id: n.dataset.id ?? '', b: n.getBoundingClientRect() }));
        const inside = boxes.filter(({ b }) => b.left >= card.left && b.right <= card.right && b.top >= card.top && b.bottom <= card.bottom);
        const covered = boxes.filter(({ id, b }) => boxes.some((o) => o.id !== id && o.b.left < b.right && b.left < o.b.right && o.b.top < b.bottom && b.top < o.b.bottom));
        return { inView: inside.map((x) => x.id).sort(), overlapping: covered.map((x) => x.id).sort() };
      });
    await expect.poll(seen, { timeout: 15_000 }).toEqual({ inView: ['after', 'end', 'p', 'start'], overlapping: [] });
    expect((await s.c.admin.runs.get(runId)).run.definitionVersion).toBe(2);
    await screenshot(page, 'migrate-done');

    await s.c.admin.runs.decide(runId, 'p', { operationId: crypto.randomUUID(), decision: 'Approve' });
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    const done = await s.c.admin.runs.get(runId);
    expect(done.nodeRuns.find((n) => n.nodeKey === 'after')?.status).toBe('Succeeded');
  });

  it('asks for a mapping when the new version renamed the live node, and moves the run once it is given', async () => {
    const page = s.page;
    const renamed = {
      nodes: [{ key: 'start', kind: 'Start' }, { ...pause, key: 'gate' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
      edges: [
        { key: 'e1', from: 'start', to: 'gate' },
        { key: 'e2', from: 'gate', to: 'end' },
      ],
    };
    const def = await s.c.admin.definitions.create({ name: 'renamed gate', graph: v1 });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');
    await s.c.admin.definitions.update(def.id, { graph: renamed, version: 1 });

    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('button', { name: 'Migrate…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Migrate this run' });
    const plan = dialog.locator('.migration-plan');
    await dialog.getByLabel('Target version').locator('option').first().waitFor({ state: 'attached' });
    await dialog.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => plan.getAttribute('data-verdict')).toBe('needsMapping');
    expect(await dialog.getByRole('button', { name: 'Execute migration' }).isDisabled()).toBe(true);
    // a line that is not a pair is refused before anything is sent
    const mapping = dialog.getByLabel('Node mapping (optional)');
    await mapping.fill('p gate');
    expect(await dialog.getByRole('alert').innerText()).toBe('Line 1 is not old-key: new-key');
    expect(await dialog.getByRole('button', { name: 'Dry run' }).isDisabled()).toBe(true);
    await mapping.fill('p: gate');
    await plan.waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => plan.getAttribute('data-verdict')).toBe('compatible');
    expect(await dialog.locator('tr[data-from="p"]').getAttribute('data-to')).toBe('gate');
    await screenshot(page, 'migrate-mapped');
    await dialog.getByRole('button', { name: 'Execute migration' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator('.graph-card .graph-node[data-node-key="gate"]').waitFor({ timeout: 15_000 });
    expect((await s.c.admin.runs.get(runId)).run.definitionVersion).toBe(2);
  });

  it('offers no migration to a key without the operate scope', async () => {
    const def = await s.c.admin.definitions.create({ name: 'read-only look', graph: v1 });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');
    const context = await s.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await signIn(page, s.c.baseUrl, KEYS.read);
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.locator('.run-title [data-status="WaitingForApproval"]').waitFor();
    expect(await page.getByRole('button', { name: 'Migrate…' }).count()).toBe(0);
    await context.close();
  });
});
