/**
 * How noisy the bench's own run was, and whether a ratio it prints can be trusted.
 *
 * A figure is only as good as the quiet of the host it was taken on: on a 2-core machine one
 * stray compile doubles a hop. So the bench samples the load average throughout, times a fixed
 * reference (a CPU loop and Postgres round trips) between its sections, and judges every ratio
 * against the spread of the repetitions behind it. A ratio whose repetitions disagree by more
 * than the gap it claims is printed as "inconclusive", never as a verdict.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import type pg from 'pg';
import { percentile, spread, type Spread } from './stats';

/** Above this one-minute load average (on this 2-core host) a figure is not a figure. */
export const LOAD_LIMIT = 3;

export interface LoadFigure {
  min: number;
  mean: number;
  max: number;
  samples: number;
  /** share of the samples above {@link LOAD_LIMIT} */
  shareAbove: number;
  limit: number;
}

/** Pure: the figure of a list of one-minute load averages. */
export function loadFigure(xs: readonly number[], limit = LOAD_LIMIT): LoadFigure {
  if (xs.length === 0) return { min: NaN, mean: NaN, max: NaN, samples: 0, shareAbove: 0, limit };
  return {
    min: Math.min(...xs),
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
    max: Math.max(...xs),
    samples: xs.length,
    shareAbove: xs.filter((x) => x > limit).length / xs.length,
    limit,
  };
}

/** Samples the one-minute load average every `intervalMs` until stopped. */
export function sampleLoad(intervalMs = 2000): { stop: () => LoadFigure } {
  const xs: number[] = [loadavg()[0]!];
  const timer = setInterval(() => xs.push(loadavg()[0]!), intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      xs.push(loadavg()[0]!);
      return loadFigure(xs);
    },
  };
}

export interface ReferenceSample {
  /** where in the run it was taken (after which section) */
  at: string;
  /** ms to hash 32 MiB with SHA-256: pure CPU, the same work every time */
  cpuMs: number;
  /** median ms of 200 sequential `select 1` round trips to the bench's Postgres */
  pgRoundTripMs: number;
}

const BLOCK = Buffer.alloc(1 << 20, 7);

/** One measurement of the fixed reference. */
export async function referenceSample(pool: pg.Pool, at: string): Promise<ReferenceSample> {
  const t0 = performance.now();
  for (let i = 0; i < 32; i++) createHash('sha256').update(BLOCK).digest();
  const cpuMs = performance.now() - t0;
  const client = await pool.connect();
  try {
    const rt: number[] = [];
    for (let i = 0; i < 200; i++) {
      const s = performance.now();
      await client.query('select 1');
      rt.push(performance.now() - s);
    }
    return { at, cpuMs, pgRoundTripMs: percentile(rt, 50) };
  } finally {
    client.release();
  }
}

export interface NoiseReport {
  load: LoadFigure;
  reference: ReferenceSample[];
  cpu: Spread;
  pgRoundTrip: Spread;
}

export function noiseReport(load: LoadFigure, reference: ReferenceSample[]): NoiseReport {
  return {
    load,
    reference,
    cpu: spread(reference.map((r) => r.cpuMs)),
    pgRoundTrip: spread(reference.map((r) => r.pgRoundTripMs)),
  };
}

/** (max − min) ÷ median: how far apart the repetitions of a figure landed. */
export function relativeRange(s: Spread): number {
  if (s.n === 0 || !Number.isFinite(s.median) || s.median === 0) return NaN;
  return (s.max - s.min) / s.median;
}

/** Whether the run was quiet enough to record: the load stayed under its limit and the reference held still. */
export function quietEnough(n: NoiseReport, maxReferenceRange = 0.25): { ok: boolean; why: string[] } {
  const why: string[] = [];
  if (n.load.max > n.load.limit)
    why.push(`the load average reached ${n.load.max.toFixed(2)} (limit ${n.load.limit}; above it ${(n.load.shareAbove * 100).toFixed(0)}% of the samples)`);
  const cpu = relativeRange(n.cpu);
  if (cpu > maxReferenceRange) why.push(`the CPU reference varied by ${(cpu * 100).toFixed(0)}% between sections`);
  const pgr = relativeRange(n.pgRoundTrip);
  if (pgr > maxReferenceRange) why.push(`the Postgres round-trip reference varied by ${(pgr * 100).toFixed(0)}% between sections`);
  return { ok: why.length === 0, why };
}

export type Better = 'lower' | 'higher';

export interface RatioJudgement {
  /** median ÷ median */
  ratio: number;
  /** the ratio's range over the repetitions: worst pairing of the two sides' min and max */
  lo: number;
  hi: number;
  /** (hi − lo) ÷ ratio: how far the repetitions disagree about the ratio */
  disagreement: number;
  /** |ratio − 1|: the difference between the two sides the ratio claims */
  gap: number;
  /** false when the repetitions disagree by more than the gap: the ratio is not recorded */
  recordable: boolean;
  /** against `target`: met or not met only when the whole range lies on one side of it */
  verdict: 'met' | 'not met' | 'inconclusive' | 'not measured';
}

/**
 * Pure: judges `num ÷ den` against `target` (e.g. W1 hop ÷ shape floor ≤ 1.15, better lower).
 * The range multiplies out the repetitions' extremes, so a verdict holds for every pairing of
 * them; a range straddling the target is inconclusive, whatever the medians say.
 */
export function judgeRatio(num: Spread | null | undefined, den: Spread | null | undefined, target: number, better: Better): RatioJudgement {
  const none: RatioJudgement = { ratio: NaN, lo: NaN, hi: NaN, disagreement: NaN, gap: NaN, recordable: false, verdict: 'not measured' };
  if (!num || !den || num.n === 0 || den.n === 0 || !(den.median > 0) || !(den.min > 0)) return none;
  const ratio = num.median / den.median;
  const lo = num.min / den.max;
  const hi = num.max / den.min;
  const disagreement = (hi - lo) / ratio;
  const gap = Math.abs(ratio - 1);
  const recordable = disagreement <= gap;
  const good = (x: number) => (better === 'lower' ? x <= target : x >= target);
  const verdict = good(lo) && good(hi) ? 'met' : !good(lo) && !good(hi) ? 'not met' : 'inconclusive';
  return { ratio, lo, hi, disagreement, gap, recordable, verdict };
}

/** Pure: judges an absolute figure's repetitions against a bound the same way. */
export function judgeValue(s: Spread | null | undefined, target: number, better: Better): RatioJudgement['verdict'] {
  if (!s || s.n === 0 || !Number.isFinite(s.median)) return 'not measured';
  const good = (x: number) => (better === 'lower' ? x <= target : x >= target);
  return good(s.min) && good(s.max) ? 'met' : !good(s.min) && !good(s.max) ? 'not met' : 'inconclusive';
}
