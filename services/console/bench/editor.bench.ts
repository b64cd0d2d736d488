/**
 * Editor figures in headless Chromium against a real cluster (a benchmark, never a test):
 *
 * - open: a 200-node definition (MAX_NODES_PER_DEFINITION) opened by URL until the fitted
 *   view's cards are drawn and the card nearest the centre is selected with its config panel
 *   shown (editable), and until the server's verdict is shown;
 * - drag: the card nearest the canvas centre dragged over 60 pointer moves; per move, the time
 *   from the pointer event to the card's new transform (measured in the page), against a 50 ms
 *   budget, and the animation frames' lengths meanwhile (editor-drag.ts).
 *
 * Run: `npm run bench:editor -w @flowline/console` (builds the console when stale).
 * Options: BENCH_NODES (default 200), BENCH_RUNS (default 3).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureConsoleBuilt, startE2eCluster } from '@flowline/testing';
import { launchChromium } from '../e2e/browser';
import { bigGraph, measureDrag, quantile, type DragFigures } from './editor-drag';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const NODES = Number(process.env.BENCH_NODES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

await ensureConsoleBuilt(rootDir);
const c = await startE2eCluster({ dispatchers: 1, toolWorkers: 0 });
const browser = await launchChromium();
try {
  const id = await c.api.createDefinition(`bench ${NODES} nodes`, bigGraph(NODES));
  const figures: DragFigures = { moves: [], frames: [], opens: [] };
  const verdicts: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    // warm the session (whoami) and the cached chunks, as an operator opening a second definition would
    await page.goto(`${c.cluster.apiUrl}/console/runs`);
    await page.locator('.topbar').waitFor();
    const t0 = Date.now();
    await measureDrag(page, `${c.cluster.apiUrl}/console/editor?definitionId=${id}`, figures);
    await page.locator('.validation-strip[data-state="valid"]').waitFor({ timeout: 30_000 });
    verdicts.push(Date.now() - t0);
    await page.close();
  }
  const { opens, moves, frames } = figures;
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log(`editor bench: ${NODES} nodes, ${RUNS} runs, headless Chromium (${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'})`);
  console.log(`  open until editable   p50 ${ms(quantile(opens, 0.5))}  max ${ms(Math.max(...opens))}  (budget 2000 ms)`);
  console.log(`  open until validated (after a drag)  p50 ${ms(quantile(verdicts, 0.5))}  max ${ms(Math.max(...verdicts))}`);
  console.log(`  drag, pointer → card moved (${moves.length} events)  p50 ${ms(quantile(moves, 0.5))}  p95 ${ms(quantile(moves, 0.95))}  max ${ms(Math.max(...moves))}  (budget 50 ms)`);
  console.log(`  drag, animation frame length (${frames.length} frames)  p50 ${ms(quantile(frames, 0.5))}  p95 ${ms(quantile(frames, 0.95))}  max ${ms(Math.max(...frames))}`);
} finally {
  await browser.close();
  await c.close();
}
