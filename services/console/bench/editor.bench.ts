/**
 * Editor figures in headless Chromium against a real cluster (a benchmark, never a test):
 *
 * - open: a 200-node definition (MAX_NODES_PER_DEFINITION) opened by URL until the fitted
 *   view's cards are drawn and the card nearest the centre is selected with its config panel
 *   shown (editable), and until the server's verdict is shown;
 * - drag: the card nearest the canvas centre dragged over 60 pointer moves; per move, the time from the pointer
 *   event to the card's new transform (measured in the page), against a 50 ms budget.
 *
 * Run: `npm run bench:editor -w @flowline/console` (builds the console when stale).
 * Options: BENCH_NODES (default 200), BENCH_RUNS (default 3).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureConsoleBuilt, startE2eCluster } from '@flowline/testing';
import { launchChromium } from '../e2e/browser';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const NODES = Number(process.env.BENCH_NODES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/** Start → 198 work nodes in 6 parallel lanes with joins every few ranks → End, no positions (the editor lays it out). */
function bigGraph(n: number) {
  const nodes: Array<Record<string, unknown>> = [{ key: 'start', kind: 'Start', config: { defaultInput: { text: 'x' } } }];
  const edges: Array<Record<string, unknown>> = [];
  const lanes = 6;
  const work = n - 2;
  const last: string[] = Array.from({ length: lanes }, () => 'start');
  for (let i = 0; i < work; i++) {
    const lane = i % lanes;
    const key = `n${i}`;
    const kind = i % 3 === 0 ? 'LlmCall' : i % 3 === 1 ? 'Tool' : 'Parallel';
    const config = kind === 'LlmCall' ? { prompt: `Step ${i}` } : kind === 'Tool' ? { toolName: 'echo' } : undefined;
    nodes.push({ key, kind, ...(config ? { config } : {}) });
    edges.push({ key: `e${i}`, from: last[lane], to: key });
    last[lane] = key;
  }
  nodes.push({ key: 'end', kind: 'End', joinPolicy: 'All', config: { outcome: 'done' } });
  for (const [i, k] of last.entries()) edges.push({ key: `end${i}`, from: k, to: 'end' });
  return { schemaVersion: 1, nodes, edges };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

await ensureConsoleBuilt(rootDir);
const c = await startE2eCluster({ dispatchers: 1, toolWorkers: 0 });
const browser = await launchChromium();
try {
  const id = await c.api.createDefinition(`bench ${NODES} nodes`, bigGraph(NODES));
  const opens: number[] = [];
  const verdicts: number[] = [];
  const moves: number[] = [];
  const calls: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    // warm the session (whoami) and the cached chunks, as an operator opening a second definition would
    await page.goto(`${c.cluster.apiUrl}/console/runs`);
    await page.locator('.topbar').waitFor();
    const t0 = Date.now();
    await page.goto(`${c.cluster.apiUrl}/console/editor?definitionId=${id}`);
    // only the cards in view are drawn (onlyRenderVisibleElements): wait for the fitted view's cards
    await page.waitForFunction(() => document.querySelectorAll('.react-flow__node').length > 0, undefined, { timeout: 30_000 });
    // the card nearest the canvas centre (the view is fitted, so some cards are off screen)
    const target = await page.evaluate(() => {
      const pane = document.querySelector('.react-flow')!.getBoundingClientRect();
      const cx = pane.left + pane.width / 2;
      const cy = pane.top + pane.height / 2;
      let best = { id: '', d: Infinity };
      for (const el of document.querySelectorAll<HTMLElement>('.react-flow__node')) {
        const b = el.getBoundingClientRect();
        const d = Math.hypot(b.left + b.width / 2 - cx, b.top + b.height / 2 - cy);
        if (d < best.d) best = { id: el.dataset.id ?? '', d };
      }
      return best.id;
    });
    await page.locator(`.react-flow__node[data-id="${target}"]`).click();
    await page.locator('.inspector-head h2', { hasText: target }).waitFor();
    opens.push(Date.now() - t0);
    await page.locator('.validation-strip[data-state="valid"]').waitFor({ timeout: 30_000 });
    verdicts.push(Date.now() - t0);

    // drag n10 over 60 moves; the page records pointer → transform latency of each
    await page.evaluate((key) => {
      const el = document.querySelector<HTMLElement>(`.react-flow__node[data-id="${key}"]`)!;
      const w = window as unknown as { __lat: number[]; __last: number };
      w.__lat = [];
      w.__last = 0;
      document.addEventListener('pointermove', () => (w.__last = performance.now()), { capture: true });
      new MutationObserver(() => {
        if (w.__last > 0) w.__lat.push(performance.now() - w.__last);
      }).observe(el, { attributes: true, attributeFilter: ['style'] });
    }, target);
    const box = (await page.locator(`.react-flow__node[data-id="${target}"]`).boundingBox())!;
    const x0 = box.x + box.width / 2;
    const y0 = box.y + 10;
    await page.mouse.move(x0, y0);
    await page.mouse.down();
    for (let i = 1; i <= 60; i++) {
      const t = performance.now();
      await page.mouse.move(x0 + i * 4, y0 + i * 2);
      calls.push(performance.now() - t);
    }
    await page.mouse.up();
    moves.push(...(await page.evaluate(() => (window as unknown as { __lat: number[] }).__lat)));
    await page.close();
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log(`editor bench: ${NODES} nodes, ${RUNS} runs, headless Chromium (${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'})`);
  console.log(`  open until editable   p50 ${ms(pct(opens, 50))}  max ${ms(Math.max(...opens))}  (budget 2000 ms)`);
  console.log(`  open until validated  p50 ${ms(pct(verdicts, 50))}  max ${ms(Math.max(...verdicts))}`);
  console.log(`  drag, pointer → card moved (${moves.length} events)  p50 ${ms(pct(moves, 50))}  p95 ${ms(pct(moves, 95))}  max ${ms(Math.max(...moves))}  (budget 50 ms)`);
  console.log(`  drag, one CDP mouse move round trip  p50 ${ms(pct(calls, 50))}  p95 ${ms(pct(calls, 95))}`);
} finally {
  await browser.close();
  await c.close();
}
