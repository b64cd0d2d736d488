/**
 * The graph editor in real headless Chromium (Debian's, through playwright-core) against a
 * whole cluster (API serving the built console, a dispatcher, tool and LLM workers on the
 * scripted provider): a graph built from the palette, the server's keyed error on the right
 * element and gone once fixed, save, start with an input, the run view showing the run
 * completed; a 409 on save offering a reload; every sample opened, validated and run to a
 * terminal status; an untouched graph (laid out on open, saved or a sample) is no unsaved
 * change, only an edit is; the selection and side panel kept in the URL across a reload; a node
 * selected and deleted by keyboard; the version list, an old version read-only and restored
 * as a new version; no serious or critical axe-core violation. Screenshots go to
 * `services/console/artifacts/`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, startE2eCluster, type E2eCluster } from '@flowline/testing';
import { SAMPLES } from '../src/editor/samples';
import { launchChromium } from './browser';

const here = dirname(fileURLToPath(import.meta.url));
const rootDir = join(here, '..', '..', '..');
const artifacts = join(here, '..', 'artifacts');

let c: E2eCluster;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  await ensureConsoleBuilt(rootDir);
  c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { LLM_BASE_URL: '' } });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await c?.close();
});

async function openPage(path: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(20_000);
  await page.goto(`${c.cluster.apiUrl}/console${path}`);
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(artifacts, `editor-${name}.png`) });
const node = (page: Page, key: string) => page.locator(`.react-flow__node[data-id="${key}"]`);

/** Drags a connection from `from`'s out-handle to `to`'s in-handle. */
async function wire(page: Page, from: string, to: string): Promise<void> {
  const a = await node(page, from).locator('.react-flow__handle.source').boundingBox();
  const b = await node(page, to).locator('.react-flow__handle.target').boundingBox();
  if (!a || !b) throw new Error(`no handles for ${from} → ${to}`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 6 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 6 });
  await page.mouse.up();
}

async function fit(page: Page): Promise<void> {
  await page.locator('.react-flow__controls-fitview').click();
  await page.waitForTimeout(300);
}

/** Waits for the server's verdict on the current document to be in. */
async function validated(page: Page, state: 'valid' | 'invalid'): Promise<void> {
  await page.locator(`.validation-strip[data-state="${state}"]`).waitFor();
}

async function runCompletes(page: Page): Promise<string> {
  await page.waitForURL(/\/console\/run\?runId=/);
  const runId = new URL(page.url()).searchParams.get('runId')!;
  await page.locator('.run-title').getByText('Completed').waitFor({ timeout: 45_000 });
  return runId;
}

describe('the graph editor in a browser', () => {
  it('builds Start → LlmCall → Condition → two Ends from the palette, shows the keyed error on the Condition until fixed, saves, starts with an input and the run completes', async () => {
    const page = await openPage('/editor?new=palette');
    await node(page, 'end').waitFor();
    // the blank starter's End goes: the graph is built from the palette
    await node(page, 'end').click();
    await page.keyboard.press('Delete');
    await expect(node(page, 'end').count()).resolves.toBe(0);
    await node(page, 'start').click();
    for (const kind of ['LlmCall', 'Condition', 'End']) await page.getByRole('button', { name: `Add ${kind}` }).click();
    await fit(page);
    await wire(page, 'start', 'llm-call');
    await wire(page, 'llm-call', 'condition');
    await wire(page, 'condition', 'end');
    // one out-edge: the server's keyed error sits on the Condition and is listed in the strip
    await node(page, 'condition').locator('.node-card[data-issue="error"]').waitFor();
    const listed = page.locator('.issue-list[aria-label="Errors"] .issue[data-issue-key="condition"]', { hasText: 'out-edge' });
    await listed.first().waitFor();
    await shot(page, 'condition-error');
    // clicking the listed error selects the Condition; give it a path and its second End
    await listed.first().click();
    await page.locator('.inspector-head h2', { hasText: 'condition' }).waitFor();
    await page.locator('[data-testid="member-path"] input').fill('output.json.ok');
    await page.getByRole('button', { name: 'Add End' }).click();
    await fit(page);
    await wire(page, 'condition', 'end-2');
    await validated(page, 'valid');
    await node(page, 'condition').locator('.node-card:not([data-issue])').waitFor();
    await page.getByLabel('Definition name').fill('Built in the browser');
    await shot(page, 'built');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('editor-status').getByText('v1 · saved').waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByLabel('Run input (JSON)').fill('{"text": "hello from the editor"}');
    await page.getByRole('button', { name: 'Start run' }).click();
    const runId = await runCompletes(page);
    await shot(page, 'run-completed');
    // the run view links to the version the run pinned, read-only in the editor
    const pinned = page.getByRole('link', { name: 'v1', exact: true });
    expect(new URL((await pinned.getAttribute('href'))!, c.cluster.apiUrl).searchParams.get('version')).toBe('1');
    const run = await c.api.getRun(runId);
    expect(run.run.status).toBe('Completed');
    expect(run.nodeRuns.map((n) => `${n.nodeKey}:${n.status}`).sort()).toEqual(
      ['condition:Succeeded', 'end-2:Succeeded', 'end:Skipped', 'llm-call:Succeeded', 'start:Succeeded'].sort(),
    );
    await page.close();
  }, 150_000);

  it('refuses a second unconditional edge over one pair at the gesture', async () => {
    const page = await openPage('/editor?new=twice');
    await node(page, 'end').waitFor();
    await fit(page);
    await wire(page, 'start', 'end');
    await page.getByRole('status').getByText(/already has an unconditional edge/).waitFor();
    await expect(page.locator('.react-flow__edge').count()).resolves.toBe(1);
    await page.close();
  }, 60_000);

  it('adds the context edge around a Pause when it is wired, says so, and labels it context', async () => {
    const page = await openPage('/editor?new=context');
    await node(page, 'end').waitFor();
    // the starter's End is fed by the Start already: a fresh End is fed only through the Pause
    await node(page, 'end').click();
    await page.keyboard.press('Delete');
    await node(page, 'start').click();
    for (const kind of ['Pause', 'End']) await page.getByRole('button', { name: `Add ${kind}` }).click();
    await fit(page);
    await wire(page, 'start', 'pause');
    await wire(page, 'pause', 'end');
    await page.getByRole('status').getByText('Added the context edge start → end').waitFor();
    await expect.poll(() => page.locator('.react-flow__edge').count()).toBe(3);
    await page.locator('.react-flow__edge-text', { hasText: 'context' }).waitFor();
    await page.getByRole('button', { name: 'Auto-arrange' }).click();
    await fit(page);
    await shot(page, 'context-edge');
    await page.close();
  }, 60_000);

  it('offers a reload when the definition changed in another tab (409), and shows the saved version after it', async () => {
    const id = await c.api.createDefinition('Edited twice', SAMPLES.find((s) => s.id === 'hello-echo')!.graph);
    const page = await openPage(`/editor?definitionId=${id}`);
    await node(page, 'echo').waitFor();
    // another tab saves version 2, then this one renames (an edit: saving is possible)
    await c.api.client.definitions.update(id, { name: 'Renamed elsewhere', version: 1 });
    await page.getByLabel('Definition name').fill('Renamed here');
    await validated(page, 'valid');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'This definition changed elsewhere' });
    await dialog.waitFor();
    await shot(page, 'conflict');
    await dialog.getByRole('button', { name: 'Reload the saved version' }).click();
    await page.getByTestId('editor-status').getByText(/^v2/).waitFor();
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('input[aria-label="Definition name"]')?.value === 'Renamed elsewhere');
    await page.close();
  }, 60_000);

  it.each(SAMPLES.map((s) => [s.name, s] as const))('opens the sample %s, validates it with no error, saves it and runs it to a terminal status', async (_n, s) => {
    const page = await openPage(`/editor?sample=${s.id}`);
    await page.locator('.react-flow__node').first().waitFor();
    await validated(page, 'valid');
    await expect(page.locator('.issue-list').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('editor-status').getByText('v1 · saved').waitFor();
    if ((s.graph as { kind?: string }).kind === 'Chat') {
      // a Chat graph runs from a conversation message
      const id = new URL(page.url()).searchParams.get('definitionId')!;
      const sent = await c.api.send('POST', `/v1/conversations/editor-${s.id}/messages`, { definitionId: id, text: 'hello', requestId: `editor-${s.id}` });
      expect(sent.status).toBe(202);
      const done = await c.api.waitForRun(sent.body.runId as string, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 45_000);
      expect(done.run.status).toBe('Completed');
    } else {
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await page.getByRole('button', { name: 'Start run' }).click();
      await runCompletes(page);
    }
    await page.close();
  }, 90_000);

  it('counts no untouched graph as dirty: every sample saved and reopened, and every sample opened new, is not an unsaved change; only an edit is', async () => {
    const statusOf = (page: Page) => page.getByTestId('editor-status').innerText();
    const bar = (page: Page) => page.getByRole('toolbar', { name: 'Editor actions' });
    for (const s of SAMPLES) {
      // stored without positions (as `npm start` seeds them): the editor lays them out on open
      const id = await c.api.createDefinition(`Untouched ${s.name}`, s.graph);
      const page = await openPage(`/editor?definitionId=${id}`);
      await page.locator('.react-flow__node').first().waitFor();
      await validated(page, 'valid');
      expect(await statusOf(page), s.id).toBe('v1 · saved');
      expect(await bar(page).getByRole('button', { name: 'Duplicate' }).isEnabled(), s.id).toBe(true);
      if ((s.graph as { kind?: string }).kind !== 'Chat') expect(await bar(page).getByRole('button', { name: 'Start', exact: true }).isEnabled(), s.id).toBe(true);
      // leaving asks nothing: the page goes
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
      await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      expect(await page.getByRole('dialog', { name: 'Leave without saving?' }).count(), s.id).toBe(0);
      await page.close();

      // the sample opened as a new definition: not saved yet, yet nothing to lose
      const fresh = await openPage(`/editor?sample=${s.id}`);
      await fresh.locator('.react-flow__node').first().waitFor();
      await validated(fresh, 'valid');
      expect(await statusOf(fresh), s.id).toBe('not saved yet');
      expect(await bar(fresh).getByRole('button', { name: 'Save', exact: true }).isEnabled(), s.id).toBe(true);
      await fresh.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
      await fresh.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      await fresh.close();
    }

    // an explicit change is an edit: a node moved by hand
    const id = await c.api.createDefinition('Moved by hand', SAMPLES.find((x) => x.id === 'hello-echo')!.graph);
    const page = await openPage(`/editor?definitionId=${id}`);
    await validated(page, 'valid');
    await shot(page, 'untouched-saved');
    const box = (await node(page, 'echo').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 10);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 60, box.y + 90, { steps: 8 });
    await page.mouse.up();
    await page.getByTestId('editor-status').getByText('v1 · unsaved changes').waitFor();
    expect(await bar(page).getByRole('button', { name: 'Duplicate' }).isEnabled()).toBe(false);
    expect(await bar(page).getByRole('button', { name: 'Start', exact: true }).isEnabled()).toBe(false);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' }).click();
    await page.getByRole('dialog', { name: 'Leave without saving?' }).waitFor();
    await page.close();
  }, 180_000);

  it('exports a saved definition as Mermaid and DOT through the API, and the canvas as a PNG', async () => {
    const id = await c.api.createDefinition('Exported', SAMPLES.find((s) => s.id === 'score-triage')!.graph);
    const page = await openPage(`/editor?definitionId=${id}`);
    await validated(page, 'valid');
    // opened laid out, not edited: the export names what is stored
    await page.getByTestId('editor-status').getByText('v1 · saved').waitFor();
    const take = async (format: string) => {
      await page.locator('.menu > summary', { hasText: 'Export' }).click();
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: format, exact: true }).click()]);
      const path = join(artifacts, `editor-export-${file.suggestedFilename()}`);
      await file.saveAs(path);
      return { name: file.suggestedFilename(), body: readFileSync(path) };
    };
    const mermaid = await take('Mermaid');
    expect(mermaid.name).toBe('Exported.mmd');
    expect(mermaid.body.toString('utf8')).toMatch(/^flowchart LR\n/);
    const dot = await take('DOT');
    expect(dot.body.toString('utf8')).toMatch(/^digraph /);
    const png = await take('PNG');
    expect(png.name).toBe('Exported.png');
    expect(png.body.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.body.length).toBeGreaterThan(2000);
    await page.close();
  }, 60_000);

  it('keeps the selected node or edge and the side panel in the URL across a reload, and selects and deletes a node by keyboard', async () => {
    const id = await c.api.createDefinition('Selected', SAMPLES.find((s) => s.id === 'hello-echo')!.graph);
    const page = await openPage(`/editor?definitionId=${id}`);
    await validated(page, 'valid');
    // opened laid out, not edited: a reload leaves no unsaved change
    await page.getByTestId('editor-status').getByText('v1 · saved').waitFor();
    await node(page, 'echo').click();
    await page.waitForURL(/[?&]node=echo(&|$)/);
    await page.reload();
    await page.locator('.inspector-head h2', { hasText: 'echo' }).waitFor();
    await page.locator('.react-flow__node.selected[data-id="echo"]').waitFor();
    // the JSON panel too
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    await page.waitForURL(/[?&]panel=json(&|$)/);
    await page.reload();
    await page.getByTestId('graph-json').waitFor();
    await page.locator('.react-flow__node.selected[data-id="echo"]').waitFor();
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    // an edge named by the URL opens selected
    await page.goto(`${c.cluster.apiUrl}/console/editor?definitionId=${id}&edge=echo-end`);
    await page.locator('.inspector-head h2', { hasText: 'echo → end' }).waitFor();
    // keyboard: focus a card, Enter selects it, Delete removes it
    await node(page, 'end').focus();
    await page.keyboard.press('Enter');
    await page.locator('.react-flow__node.selected[data-id="end"]').waitFor();
    await page.waitForURL(/[?&]node=end(&|$)/);
    await page.keyboard.press('Delete');
    await expect(node(page, 'end').count()).resolves.toBe(0);
    await page.getByTestId('editor-status').getByText(/unsaved changes/).waitFor();
    // nothing selected any more: the inspector shows the graph's settings, the URL names no node
    await page.locator('.inspector-head h2', { hasText: 'Settings' }).waitFor();
    await page.waitForURL((u) => !u.searchParams.has('node'));
    await shot(page, 'keyboard-deleted');
    await page.close();
  }, 90_000);

  it('lists the saved versions, opens an old one read-only, and restores it as a new version', async () => {
    const g1 = SAMPLES.find((s) => s.id === 'hello-echo')!.graph as { nodes: Array<Record<string, unknown>>; edges: unknown[] };
    const g2 = { ...g1, nodes: g1.nodes.map((n) => (n.key === 'echo' ? { ...n, label: 'Echo twice' } : n)) };
    const id = await c.api.createDefinition('Versioned', g1);
    await c.api.client.definitions.update(id, { name: 'Versioned again', graph: g2, version: 1 });
    const page = await openPage(`/editor?definitionId=${id}&panel=versions`);
    const versions = page.getByRole('complementary', { name: 'Versions' });
    await versions.locator('[data-version="2"][aria-current="true"]').waitFor();
    await expect(versions.locator('[data-version]').count()).resolves.toBe(2);
    await versions.locator('[data-version="1"]').click();
    await page.waitForURL(/[?&]version=1(&|$)/);
    await page.getByRole('note', { name: 'Read-only version' }).waitFor();
    await page.getByTestId('editor-status').getByText('v1 · read-only').waitFor();
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('input[aria-label="Definition name"]')?.value === 'Versioned');
    await expect(node(page, 'echo').locator('.node-label').textContent()).resolves.toBe('echo');
    // read-only: selectable, but nothing is removed or saved
    await node(page, 'echo').click();
    await page.keyboard.press('Delete');
    await expect(node(page, 'echo').count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Save', exact: true }).count()).resolves.toBe(0);
    await shot(page, 'version-read-only');
    await page.getByRole('button', { name: 'Restore this version' }).click();
    await page.getByTestId('editor-status').getByText(/restored from v1 · unsaved changes/).waitFor();
    await validated(page, 'valid');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('editor-status').getByText('v3 · saved').waitFor();
    await versions.locator('[data-version="3"][aria-current="true"]').waitFor();
    const v3 = await c.api.client.definitions.version(id, 3);
    expect(v3.name).toBe('Versioned');
    expect((v3.graph as typeof g1).nodes.map((n) => [n.key, n.label ?? null])).toEqual(g1.nodes.map((n) => [n.key, null]));
    await page.close();
  }, 90_000);

  it('has no serious or critical axe-core violation in the editor', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${c.cluster.apiUrl}/console/editor?sample=review-gate`);
    await validated(page, 'valid');
    const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axeSource);
    const check = async (what: string) => {
      const r = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
        violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
      };
      const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${what}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`)).toEqual([]);
    };
    await check('graph settings');
    await node(page, 'review').click();
    await check('a Pause selected');
    await page.locator('.react-flow__edge').first().click({ force: true });
    await check('an edge selected');
    await page.getByRole('button', { name: 'New' }).click();
    await check('the New dialog');
    await shot(page, 'new-dialog');
    await context.close();
  }, 60_000);
});
