import { describe, expect, it } from 'vitest';
import { judgeRatio, judgeValue, loadFigure, noiseReport, quietEnough, relativeRange } from './noise';
import { spread } from './stats';

const s = (...xs: number[]) => spread(xs);

describe('judgeRatio', () => {
  it('meets a lower-is-better target only when every pairing of the repetitions meets it', () => {
    // W1 hop 4.0–4.2 ms against a floor of 3.9–4.0 ms: 1.0–1.08×, all ≤ 1.15
    expect(judgeRatio(s(4, 4.1, 4.2), s(3.9, 3.95, 4), 1.15, 'lower').verdict).toBe('met');
    // 5 ms against 3.6 ms: 1.39×, every pairing above 1.15
    const j = judgeRatio(s(5, 5, 5.1), s(3.6, 3.61, 3.62), 1.15, 'lower');
    expect(j.verdict).toBe('not met');
    expect(j.ratio).toBeCloseTo(5 / 3.61, 6);
    expect(j.recordable).toBe(true);
  });

  it('calls a range that straddles the target inconclusive, whatever the medians say', () => {
    const j = judgeRatio(s(4, 4.2, 5), s(3.9, 4, 4.1), 1.15, 'lower');
    expect(j.ratio).toBeLessThan(1.15);
    expect(j.hi).toBeGreaterThan(1.15);
    expect(j.verdict).toBe('inconclusive');
  });

  it('refuses to record a ratio whose repetitions disagree by more than the gap it claims', () => {
    // 1.05× claimed, but the repetitions span 0.8–1.4×
    const j = judgeRatio(s(800, 1050, 1300), s(950, 1000, 1000), 1.5, 'higher');
    expect(j.gap).toBeCloseTo(0.05, 6);
    expect(j.disagreement).toBeGreaterThan(j.gap);
    expect(j.recordable).toBe(false);
    // and a clear gap with tight repetitions is recorded
    expect(judgeRatio(s(1590, 1600, 1610), s(990, 1000, 1010), 1.5, 'higher')).toMatchObject({ recordable: true, verdict: 'met' });
  });

  it('is not measured without both sides', () => {
    expect(judgeRatio(null, s(1), 1, 'lower').verdict).toBe('not measured');
    expect(judgeRatio(s(1), spread([]), 1, 'lower').verdict).toBe('not measured');
    expect(judgeRatio(s(1), s(0), 1, 'lower').verdict).toBe('not measured');
  });
});

describe('judgeValue', () => {
  it('judges an absolute bound over the repetitions', () => {
    expect(judgeValue(s(3, 4, 4.5), 5, 'lower')).toBe('met');
    expect(judgeValue(s(4, 5, 6), 5, 'lower')).toBe('inconclusive');
    expect(judgeValue(s(6, 7), 5, 'lower')).toBe('not met');
    expect(judgeValue(undefined, 5, 'lower')).toBe('not measured');
  });
});

describe('host noise', () => {
  it('summarises load samples and counts those above the limit', () => {
    expect(loadFigure([1, 2, 4, 5], 3)).toEqual({ min: 1, mean: 3, max: 5, samples: 4, shareAbove: 0.5, limit: 3 });
    expect(loadFigure([]).samples).toBe(0);
  });

  it('says why a run was too noisy to record', () => {
    const quiet = noiseReport(loadFigure([1.2, 1.8]), [
      { at: 'start', cpuMs: 100, pgRoundTripMs: 0.1 },
      { at: 'end', cpuMs: 104, pgRoundTripMs: 0.11 },
    ]);
    expect(quietEnough(quiet)).toEqual({ ok: true, why: [] });
    const loud = noiseReport(loadFigure([1.2, 4.5]), [
      { at: 'start', cpuMs: 100, pgRoundTripMs: 0.1 },
      { at: 'end', cpuMs: 180, pgRoundTripMs: 0.1 },
    ]);
    const q = quietEnough(loud);
    expect(q.ok).toBe(false);
    expect(q.why.join(' ')).toMatch(/load average reached 4.50/);
    expect(q.why.join(' ')).toMatch(/CPU reference varied by 80%/);
    // the median of two repetitions is the lower one (nearest rank)
    expect(relativeRange(s(100, 180))).toBeCloseTo(0.8, 6);
  });
});
