/**
 * The editor's drag figure, shared by `bench:editor` and `bench:console` (a benchmark, never a
 * test): a large definition opened by URL and fitted whole (every card drawn: the most work a
 * move can cost), the card nearest the canvas centre dragged over 60 pointer moves; per move, the time from the pointer event to the card's new transform
 * (measured in the page), and the length of each animation frame while the drag lasts.
 */
import type { Page } from 'playwright-core';

/** Start → `n - 2` work nodes in 6 parallel lanes → End, no positions (the editor lays it out). */
export function bigGraph(n: number) {
  const nodes: Array<Record<string, unknown>> = [{ key: 'start', kind: 'Start', config: { defaultInput: { text: 'x' } } }];
  const edges: Array<Record<string, unknown>> = [];
  const lanes = 6;
  const last: string[] = Array.from({ length: lanes }, () => 'start');
  for (let i = 0; i < n - 2; i++) {
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

/** The `q` quantile of `xs` (0.95: the p95), NaN for none. */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Pointer moves per drag. */
export const DRAG_MOVES = 60;

/**
 * In-page code is passed as text: tsx would wrap named functions inside an evaluate callback
 * in a helper the page does not have. Answers the key of the card nearest the canvas centre.
 */
const NEAREST_CARD = `(() => {
  const pane = document.querySelector('.editor-body .react-flow').getBoundingClientRect();
  const cx = pane.left + pane.width / 2;
  const cy = pane.top + pane.height / 2;
  let best = { id: '', d: Infinity };
  for (const el of document.querySelectorAll('.editor-body .react-flow__node')) {
    const b = el.getBoundingClientRect();
    const d = Math.hypot(b.left + b.width / 2 - cx, b.top + b.height / 2 - cy);
    if (d < best.d) best = { id: el.dataset.id || '', d };
  }
  return best.id;
})()`;

/** Records pointer → card-moved latencies and animation frame lengths until `__stop` is set. */
const RECORD = (key: string) => `(() => {
  const el = document.querySelector('.react-flow__node[data-id="${key}"]');
  const w = window;
  w.__lat = []; w.__frames = []; w.__last = 0; w.__stop = false;
  document.addEventListener('pointermove', () => (w.__last = performance.now()), { capture: true });
  new MutationObserver(() => { if (w.__last > 0) w.__lat.push(performance.now() - w.__last); }).observe(el, { attributes: true, attributeFilter: ['style'] });
  let prev = performance.now();
  const frame = (t) => { w.__frames.push(t - prev); prev = t; if (!w.__stop) requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
})()`;

export interface DragFigures {
  /** pointer event → the card's new transform, per move (ms) */
  moves: number[];
  /** animation frame lengths while dragging (ms) */
  frames: number[];
  /** open by URL until the centre card is selected with its config shown (ms), one per page */
  opens: number[];
}

/** Opens `url` in `page` (signed in as needed), drags the centre card, and answers the figures. */
export async function measureDrag(page: Page, url: string, into: DragFigures): Promise<void> {
  const t0 = Date.now();
  await page.goto(url);
  // only the cards in view are drawn (onlyRenderVisibleElements): wait for the fitted view's cards
  await page.waitForFunction(() => document.querySelectorAll('.react-flow__node').length > 0, undefined, { timeout: 30_000 });
  const target = (await page.evaluate(NEAREST_CARD)) as string;
  const card = page.locator(`.editor-body .react-flow__node[data-id="${target}"]`);
  await card.click();
  await page.locator('.inspector-head h2', { hasText: target }).waitFor();
  into.opens.push(Date.now() - t0);
  await page.evaluate(RECORD(target));
  const box = (await card.boundingBox())!;
  // the card's centre: the whole graph is fitted, so at 150 nodes a card is a few pixels tall
  // and a press beside it would pan the view instead
  const x0 = box.x + box.width / 2;
  const y0 = box.y + box.height / 2;
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  for (let i = 1; i <= DRAG_MOVES; i++) await page.mouse.move(x0 + i * 4, y0 + i * 2);
  await page.mouse.up();
  const got = (await page.evaluate('(() => { window.__stop = true; return { lat: window.__lat, frames: window.__frames }; })()')) as { lat: number[]; frames: number[] };
  into.moves.push(...got.lat);
  // the first frame spans the wait before the drag
  into.frames.push(...got.frames.slice(1));
}
