/** Pure helpers for figures: percentiles, medians over repetitions, formatting. */

/** The p-th percentile (0..100) of `xs` by nearest rank; NaN for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (xs: readonly number[]): number => percentile(xs, 50);

/** Median and range of repeated measurements of one figure. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(xs: readonly number[]): Spread {
  const ok = xs.filter((x) => Number.isFinite(x));
  if (ok.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  return { median: median(ok), min: Math.min(...ok), max: Math.max(...ok), n: ok.length };
}

/** A number with sensible precision: 3 significant digits below 100, integers above. */
export function fmt(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en-US');
  return Number(x.toPrecision(3)).toString();
}

/** "median (min–max)" or just the value for a single repetition. */
export function fmtSpread(s: Spread | undefined): string {
  if (!s || s.n === 0) return 'n/a';
  if (s.n === 1 || s.min === s.max) return fmt(s.median);
  return `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
}

/** Runs `fn` at most `limit` at a time over `items`; results in item order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
