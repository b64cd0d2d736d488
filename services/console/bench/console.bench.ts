/**
 * `npm run bench -w @flowline/console` (also `npm run bench -- --only console`): the
 * console's figures in headless Chromium against a real cluster — never a timed test.
 *
 * 1. initial JavaScript: gzip bytes of the first script, the app it always loads and their
 *    static imports (what a first visit downloads before any view; the run view, the chat
 *    page and the editor are separate chunks);
 * 2. a 200-node run's view interactive: from navigation start until the view shows the
 *    run's statuses (every graph node React Flow draws — those in the viewport — and
 *    every node-table row drawn — those in its scroll box — reads Succeeded) and until a
 *    click on a drawn graph node has opened its panel (cold browser context each
 *    repetition);
 *    The same for a 150-node run (7 chains of 21 Tools);
 * 3. a 200-node run progressing (9 chains of 22 `wait` tools, ~100 node changes per
 *    second, measured from the run's events): how far the view is behind each commit
 *    (the time a node first shows Succeeded, in the table or the graph, minus its
 *    `node.completed` event's commit time, same host clock), and how fast a click on a
 *    drawn graph node opens its panel meanwhile;
 * 4. the editor with a 150-node definition: a card dragged over 60 pointer moves, per move the
 *    time from the pointer event to the card's new transform, and the frames' lengths
 *    meanwhile (editor-drag.ts).
 *
 *   --quick: fewer repetitions
 * Builds the app first when `dist` is missing or older than its sources.
 * Writes services/console/artifacts/bench.json.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { waitFor, ensureConsoleBuilt } from '@flowline/testing';
import { launchChromium } from '../e2e/browser';
import { KEYS, artifactsDir, rootDir, startConsoleCluster, type ConsoleCluster } from '../e2e/console-cluster';
import { bigGraph, measureDrag, quantile, type DragFigures } from './editor-drag';

/** Nodes of the editor drag figure's definition. */
const EDITOR_NODES = 150;

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const REPS = flags.quick ? 3 : 5;
const CHAINS = 9;
const CHAIN_LENGTH = 22;
const WAIT_MS = 150;
const log = (s: string) => process.stderr.write(`[console bench] ${s}\n`);

/** A wide graph's chains: `chains` of `length` Tools, the last one shorter by `shortLast`. */
interface Shape {
  chains: number;
  length: number;
  shortLast: 0 | 1;
}
/** 9 chains of 22 (the last 21) + Start, gate, End = 200 nodes; 7 chains of 21 + 3 = 150. */
const SHAPE_200: Shape = { chains: CHAINS, length: CHAIN_LENGTH, shortLast: 1 };
const SHAPE_150: Shape = { chains: 7, length: 21, shortLast: 0 };
const nodeCount = (sh: Shape) => sh.chains * sh.length - sh.shortLast + 3;
const chainLength = (c: number, sh: Shape = SHAPE_200) => (c === sh.chains - 1 ? sh.length - sh.shortLast : sh.length);
const nodeKey = (c: number, i: number) => `c${c}_${String(i).padStart(2, '0')}`;

/**
 * Start → `gate` (a Pause: the run holds until it is approved, so the view can be open
 * before anything moves) → 9 chains of `wait` Tools (22, the last 21) → End: 200 nodes.
 */
function wideGraph(waitMs: number, sh: Shape = SHAPE_200) {
  const nodes: unknown[] = [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
  ];
  const edges: unknown[] = [{ key: 'e_gate', from: 'start', to: 'gate' }];
  for (let c = 0; c < sh.chains; c++) {
    for (let i = 0; i < chainLength(c, sh); i++) {
      const key = nodeKey(c, i);
      nodes.push({ key, kind: 'Tool', config: { toolName: 'wait', arguments: { ms: waitMs } } });
      edges.push({
        key: `e_${key}`,
        from: i === 0 ? 'gate' : nodeKey(c, i - 1),
        to: key,
        ...(i === 0 ? { condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } } : {}),
      });
    }
    edges.push({ key: `e_end_${c}`, from: nodeKey(c, chainLength(c, sh) - 1), to: 'end' });
  }
  nodes.push({ key: 'end', kind: 'End', config: { outcome: 'done' } });
  return { schemaVersion: 1, nodes, edges };
}

/** Starts a run of `definitionId` and approves its gate once it waits. */
async function startAndRelease(c: ConsoleCluster, definitionId: string, beforeRelease?: () => Promise<void>): Promise<string> {
  const { runId } = await c.admin.runs.start(definitionId, {});
  await waitFor(async () => (await c.admin.runs.get(runId)).run.status === 'WaitingForApproval', { timeoutMs: 30_000, intervalMs: 100, description: 'gate waits' });
  await beforeRelease?.();
  await c.admin.runs.decide(runId, 'gate', { operationId: `release-${runId}`, decision: 'Approve' });
  return runId;
}

/**
 * gzip bytes of the JavaScript a first visit loads before any view: the entry `index.html`
 * names, the app it always imports (`src/boot/mount.tsx`), and everything those import
 * statically — read from Vite's build manifest. Chunks a view asks for (the run view, the
 * chat page, the editor) are not counted.
 */
function initialJs(): { files: Array<{ file: string; gzipBytes: number }>; totalGzipBytes: number } {
  const dist = join(rootDir, 'services', 'console', 'dist');
  type Chunk = { file: string; imports?: string[]; isEntry?: boolean };
  const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8')) as Record<string, Chunk>;
  const always = ['index.html', 'src/boot/mount.tsx'];
  if (!always.every((k) => manifest[k])) throw new Error(`the build manifest lacks ${always.filter((k) => !manifest[k]).join(', ')}`);
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const k of manifest[key]!.imports ?? []) visit(k);
  };
  always.forEach(visit);
  const files = [...seen].map((k) => manifest[k]!.file).filter((f) => f.endsWith('.js')).map((file) => ({ file, gzipBytes: gzipSync(readFileSync(join(dist, file)), { level: 9 }).length }));
  return { files, totalGzipBytes: files.reduce((s, f) => s + f.gzipBytes, 0) };
}

/** A page signed in with the admin key (sessionStorage set before the app loads). */
async function signedInPage(browser: Browser): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await ctx.addInitScript((key) => sessionStorage.setItem('flowline.apiKey', key), KEYS.admin);
  return ctx.newPage();
}

/**
 * In-page code is passed as text: tsx would wrap named functions inside an evaluate
 * callback in a helper the page does not have.
 */
const CLICK_LATENCY = `(i) => new Promise((resolve) => {
  const drawn = [...document.querySelectorAll('.react-flow__node[data-id^="c"]')];
  const el = drawn[i % Math.max(1, drawn.length)];
  if (!el) return resolve(NaN);
  const key = el.getAttribute('data-id');
  const t0 = performance.now();
  const obs = new MutationObserver(() => {
    if (document.querySelector('[data-node-panel="' + key + '"]')) { obs.disconnect(); resolve(performance.now() - t0); }
  });
  obs.observe(document.body, { subtree: true, childList: true });
  el.click();
  if (document.querySelector('[data-node-panel="' + key + '"]')) { obs.disconnect(); resolve(performance.now() - t0); }
})`;

const RECORD_SUCCEEDED = `(() => {
  const seen = {};
  const scan = () => { for (const el of document.querySelectorAll('[data-node-key][data-status="Succeeded"]')) { const k = el.getAttribute('data-node-key'); if (!(k in seen)) seen[k] = Date.now(); } };
  new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  scan();
  window.__succeededAt = seen;
})()`;

/** Clicks the `i`-th drawn chain node of the graph and answers the ms until its panel is in the DOM. */
function clickLatency(page: Page, i: number): Promise<number> {
  return page.evaluate(`(${CLICK_LATENCY})(${i})`) as Promise<number>;
}

/**
 * The view shows the run's statuses: each graph node drawn (React Flow draws those in the
 * viewport) and each node-table row drawn (the table draws the rows in its scroll box's
 * view) reads Succeeded, and the table stands for all `nodes` (`aria-rowcount` nodes + 1).
 */
const ALL_SUCCEEDED = (nodes: number) => {
  const table = document.querySelector('table.node-table');
  const drawn = [...document.querySelectorAll('.graph-node'), ...document.querySelectorAll('tr[data-node-key]')];
  return table?.getAttribute('aria-rowcount') === String(nodes + 1) && drawn.length > 0 && drawn.every((e) => e.getAttribute('data-status') === 'Succeeded');
};

async function interactive(c: ConsoleCluster, browser: Browser, runId: string, nodes: number) {
  const rendered: number[] = [];
  const clickable: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const page = await signedInPage(browser);
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}`);
    await page.waitForFunction(ALL_SUCCEEDED, nodes, { timeout: 30_000, polling: 'raf' });
    const drawnAt = await page.evaluate(() => performance.now());
    const click = await clickLatency(page, r);
    if (!Number.isFinite(click)) throw new Error(`the ${nodes}-node view drew no chain node to click`);
    rendered.push(drawnAt);
    clickable.push(drawnAt + click);
    await page.context().close();
  }
  return { renderedMs: rendered, interactiveMs: clickable };
}

async function progressing(c: ConsoleCluster, browser: Browser, definitionId: string) {
  const page = await signedInPage(browser);
  const { runId } = await c.admin.runs.start(definitionId, {});
  await waitFor(async () => (await c.admin.runs.get(runId)).run.status === 'WaitingForApproval', { timeoutMs: 30_000, intervalMs: 100, description: 'gate waits' });
  // the view is open and live before anything moves
  await page.goto(`${c.baseUrl}/console/run?runId=${runId}`);
  await page.locator('.graph-node[data-node-key="gate"][data-status="WaitingForApproval"]').waitFor({ timeout: 30_000 });
  await page.locator('[data-live-mode="live"]').waitFor({ timeout: 30_000 });
  await page.evaluate(RECORD_SUCCEEDED);
  const released = Date.now();
  await c.admin.runs.decide(runId, 'gate', { operationId: `release-${runId}`, decision: 'Approve' });
  const started = released;
  const clicks: number[] = [];
  let i = 0;
  for (;;) {
    const detail = await c.admin.runs.get(runId);
    if (detail.run.status === 'Completed' || detail.run.status === 'Failed') break;
    if (Date.now() - started > 120_000) throw new Error('the 200-node run did not finish in 2 minutes');
    const click = await clickLatency(page, i * 7);
    if (!Number.isFinite(click)) throw new Error('the progressing view drew no chain node to click');
    clicks.push(click);
    i++;
    await page.waitForTimeout(250);
  }
  await page.waitForFunction(ALL_SUCCEEDED, nodeCount(SHAPE_200), { timeout: 10_000 });
  const seenAt = await page.evaluate(() => (window as unknown as { __succeededAt: Record<string, number> }).__succeededAt);
  const events = await c.admin.runs.allEvents(runId);
  const completedAt = new Map(events.filter((e) => e.kind === 'node.completed' && e.nodeKey).map((e) => [e.nodeKey!, Date.parse(e.at)]));
  // a node is timed when it was on screen (drawn in the graph's viewport or the table's view) as it completed
  const lags = [...completedAt].filter(([k, at]) => seenAt[k] !== undefined && at >= released).map(([k, at]) => seenAt[k]! - at);
  const nodeEvents = events.filter((e) => ['node.queued', 'node.started', 'node.completed'].includes(e.kind));
  const times = nodeEvents.map((e) => Date.parse(e.at));
  const spanS = (Math.max(...times) - Math.min(...times)) / 1000;
  await page.context().close();
  return {
    runId,
    nodeChanges: nodeEvents.length,
    spanSeconds: spanS,
    changesPerSecond: nodeEvents.length / spanS,
    lagMs: { p50: quantile(lags, 0.5), p95: quantile(lags, 0.95), max: Math.max(...lags), n: lags.length },
    clickMs: { p50: quantile(clicks, 0.5), p95: quantile(clicks, 0.95), max: Math.max(...clicks), n: clicks.length },
  };
}

// the figures are of the current sources: build the app first when dist is missing or stale
await ensureConsoleBuilt(rootDir, log);
const js = initialJs();
log(`initial JavaScript: ${(js.totalGzipBytes / 1000).toFixed(1)} kB gzip over ${js.files.length} files`);
const c = await startConsoleCluster({ env: { LANE_CONCURRENCY: '16', MAX_TOTAL_ATTEMPTS: '1000' }, dispatchers: 1 });
let browser: Browser | null = null;
try {
  browser = await launchChromium();
  const fast = await c.admin.definitions.create({ name: 'bench-200-fast', graph: wideGraph(0) });
  const paced = await c.admin.definitions.create({ name: 'bench-200-paced', graph: wideGraph(WAIT_MS) });
  const done = { runId: await startAndRelease(c, fast.id) };
  await waitFor(async () => (await c.admin.runs.get(done.runId)).run.status === 'Completed', { timeoutMs: 120_000, intervalMs: 500, description: '200-node run completed' });
  log('200-node run completed; measuring the view');
  const inter = await interactive(c, browser, done.runId, nodeCount(SHAPE_200));
  log(`interactive: ${inter.interactiveMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  const fast150 = await c.admin.definitions.create({ name: 'bench-150-fast', graph: wideGraph(0, SHAPE_150) });
  const done150 = { runId: await startAndRelease(c, fast150.id) };
  await waitFor(async () => (await c.admin.runs.get(done150.runId)).run.status === 'Completed', { timeoutMs: 120_000, intervalMs: 500, description: '150-node run completed' });
  const inter150 = await interactive(c, browser, done150.runId, nodeCount(SHAPE_150));
  log(`150-node interactive: ${inter150.interactiveMs.map((x) => x.toFixed(0)).join(', ')} ms`);
  const prog = await progressing(c, browser, paced.id);
  log(`progressing: ${prog.changesPerSecond.toFixed(0)} changes/s, lag p95 ${prog.lagMs.p95.toFixed(0)} ms, click p95 ${prog.clickMs.p95.toFixed(0)} ms`);
  const big = await c.admin.definitions.create({ name: `bench-editor-${EDITOR_NODES}`, graph: bigGraph(EDITOR_NODES) });
  const drag: DragFigures = { moves: [], frames: [], opens: [] };
  for (let r = 0; r < REPS; r++) {
    const page = await signedInPage(browser);
    await measureDrag(page, `${c.baseUrl}/console/editor?definitionId=${big.id}`, drag);
    await page.context().close();
  }
  log(`editor drag: pointer → card p95 ${quantile(drag.moves, 0.95).toFixed(1)} ms, frame p95 ${quantile(drag.frames, 0.95).toFixed(1)} ms`);
  const result = {
    at: new Date().toISOString(),
    command: `npm run bench -w @flowline/console${flags.quick ? ' -- --quick' : ''}`,
    chromium: browser.version(),
    initialJs: js,
    view200: {
      reps: REPS,
      renderedMs: { median: quantile(inter.renderedMs, 0.5), max: Math.max(...inter.renderedMs), all: inter.renderedMs },
      interactiveMs: { median: quantile(inter.interactiveMs, 0.5), max: Math.max(...inter.interactiveMs), all: inter.interactiveMs },
    },
    view150: {
      reps: REPS,
      interactiveMs: { median: quantile(inter150.interactiveMs, 0.5), max: Math.max(...inter150.interactiveMs), all: inter150.interactiveMs },
    },
    progressing: prog,
    editorDrag: {
      nodes: EDITOR_NODES,
      moveMs: { p50: quantile(drag.moves, 0.5), p95: quantile(drag.moves, 0.95), max: Math.max(...drag.moves), n: drag.moves.length },
      frameMs: { p50: quantile(drag.frames, 0.5), p95: quantile(drag.frames, 0.95), max: Math.max(...drag.frames), n: drag.frames.length },
    },
  };
  mkdirSync(artifactsDir, { recursive: true });
  writeFileSync(join(artifactsDir, 'bench.json'), `${JSON.stringify(result, null, 2)}\n`);
  const kb = (b: number) => `${(b / 1000).toFixed(1)} kB`;
  process.stdout.write(
    [
      '',
      '| figure | target | measured |',
      '|---|---|---|',
      `| initial JavaScript (gzip: first script + the app it always loads, with their imports) | ≤ 350 kB | ${kb(js.totalGzipBytes)} |`,
      `| 200-node run view: every status on screen (median / max of ${REPS}, cold context) | — | ${result.view200.renderedMs.median.toFixed(0)} / ${result.view200.renderedMs.max.toFixed(0)} ms |`,
      `| 200-node run view interactive: statuses on screen + a click opened a node panel (median / max) | ≤ 1500 ms | ${result.view200.interactiveMs.median.toFixed(0)} / ${result.view200.interactiveMs.max.toFixed(0)} ms |`,
      `| 150-node run view interactive: statuses on screen + a click opened a node panel (median / max of ${REPS}, cold context) | ≤ 1500 ms | ${result.view150.interactiveMs.median.toFixed(0)} / ${result.view150.interactiveMs.max.toFixed(0)} ms |`,
      `| progressing run: node changes per second (measured from its events) | ~100 | ${prog.changesPerSecond.toFixed(0)} (${prog.nodeChanges} in ${prog.spanSeconds.toFixed(1)} s) |`,
      `| view behind the commit (shown Succeeded − node.completed at; p50 / p95 / max of ${prog.lagMs.n}) | ≤ 500 ms | ${prog.lagMs.p50.toFixed(0)} / ${prog.lagMs.p95.toFixed(0)} / ${prog.lagMs.max.toFixed(0)} ms |`,
      `| click → node panel while progressing (p50 / p95 / max of ${prog.clickMs.n}) | ≤ 100 ms | ${prog.clickMs.p50.toFixed(0)} / ${prog.clickMs.p95.toFixed(0)} / ${prog.clickMs.max.toFixed(0)} ms |`,
      `| editor drag at ${EDITOR_NODES} nodes: pointer → card moved, per frame (p50 / p95 / max of ${result.editorDrag.moveMs.n}) | p95 ≤ 50 ms | ${result.editorDrag.moveMs.p50.toFixed(1)} / ${result.editorDrag.moveMs.p95.toFixed(1)} / ${result.editorDrag.moveMs.max.toFixed(1)} ms |`,
      `| editor drag at ${EDITOR_NODES} nodes: animation frame length while dragging (p50 / p95 / max of ${result.editorDrag.frameMs.n}) | — | ${result.editorDrag.frameMs.p50.toFixed(1)} / ${result.editorDrag.frameMs.p95.toFixed(1)} / ${result.editorDrag.frameMs.max.toFixed(1)} ms |`,
      '',
    ].join('\n'),
  );
} finally {
  await browser?.close();
  await c.close();
}
