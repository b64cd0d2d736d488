import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSchedulePolicy, checkScheduleSpec, type CompiledSpec } from './spec';
import { catchupVerdicts, nextSlot, overlapVerdict, previewSlots, slotJitterMs, slotRequestId, slotsBetween } from './slots';
import { offsetAt, wallOf } from './zone';

const compiled = (spec: Record<string, unknown>): CompiledSpec => {
  const c = checkScheduleSpec(spec);
  if (!c.ok) throw new Error(JSON.stringify(c.issues));
  return c.value.compiled;
};
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('the DST rule', () => {
  it('runs "30 2 * * *" in America/New_York once on 2026-03-08, at 03:00 EDT (the first valid instant after the gap)', () => {
    const spec = compiled({ cron: '30 2 * * *', timezone: 'America/New_York' });
    const slots = slotsBetween(spec, at('2026-03-08T05:00:00Z'), at('2026-03-09T05:00:00Z'), 10);
    expect(slots.map(iso)).toEqual(['2026-03-08T07:00:00.000Z']);
    expect(previewSlots(spec, at('2026-03-08T05:00:00Z'), 2)).toEqual([
      { at: '2026-03-08T07:00:00.000Z', local: '2026-03-08T03:00:00-04:00', utcOffset: '-04:00' },
      { at: '2026-03-09T06:30:00.000Z', local: '2026-03-09T02:30:00-04:00', utcOffset: '-04:00' },
    ]);
  });

  it('runs "30 1 * * *" in America/New_York once on 2026-11-01 (the repeated hour runs at its first occurrence)', () => {
    const spec = compiled({ cron: '30 1 * * *', timezone: 'America/New_York' });
    const slots = slotsBetween(spec, at('2026-11-01T04:00:00Z'), at('2026-11-02T05:00:00Z'), 10);
    expect(slots.map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
  });

  it('collapses several skipped wall times into one run and runs an hourly pattern once through the repeated hour', () => {
    const gap = compiled({ cron: '*/30 2 * * *', timezone: 'America/New_York' });
    expect(slotsBetween(gap, at('2026-03-08T05:00:00Z'), at('2026-03-08T12:00:00Z'), 10).map(iso)).toEqual(['2026-03-08T07:00:00.000Z']);
    const hourly = compiled({ cron: '0 * * * *', timezone: 'America/New_York' });
    const walls = slotsBetween(hourly, at('2026-11-01T03:30:00Z'), at('2026-11-01T09:30:00Z'), 20).map((t) => wallOf('America/New_York', t));
    expect(new Set(walls).size).toBe(walls.length);
  });
});

const ZONES = [
  'America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles', 'America/Sao_Paulo', 'America/Havana',
  'America/Santiago', 'America/St_Johns', 'Europe/London', 'Europe/Berlin', 'Europe/Moscow', 'Africa/Cairo', 'Asia/Tehran',
  'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Sydney', 'Australia/Lord_Howe', 'Pacific/Auckland', 'Pacific/Chatham', 'UTC',
];
const FROM = at('2026-01-01T00:00:00Z');
const TO = at('2028-01-01T00:00:00Z');
const DAY = 86_400_000;

/**
 * Independent oracle: walking real time forward from well before the day's target wall time, the
 * first instant (on the minute) whose wall reading reaches the target. That is the exact instant
 * normally, the transition for a skipped time, and the first occurrence for a repeated one.
 */
function oracle(zone: string, targetWall: number): number {
  let t = targetWall - offsetAt(zone, targetWall) - 4 * 3_600_000;
  t -= t % 60_000;
  while (wallOf(zone, t) < targetWall) t += 60_000;
  return t;
}

/** The zone's local midnights of days whose offset changes, over the two years. */
function transitionDays(zone: string): number[] {
  const days: number[] = [];
  for (let t = FROM; t < TO; t += DAY) if (offsetAt(zone, t) !== offsetAt(zone, t + DAY)) days.push(t - (t % DAY));
  return days;
}

describe('slots over 20 zones × 2 years (property)', () => {
  it('a daily pattern runs exactly once on every local day of both years (none skipped, none doubled)', () => {
    for (const zone of ZONES) {
      const spec = compiled({ cron: '30 2 * * *', timezone: zone });
      const slots = slotsBetween(spec, FROM, TO, 1000);
      const days = slots.map((t) => Math.floor(wallOf(zone, t) / DAY));
      for (let i = 1; i < days.length; i++) expect({ zone, step: days[i]! - days[i - 1]! }).toEqual({ zone, step: 1 });
      expect(slots.length).toBeGreaterThanOrEqual(729);
    }
  }, 60_000);

  it('every slot near a transition is the oracle instant, for any minute of any hour', () => {
    const cases = ZONES.flatMap((zone) => transitionDays(zone).map((day) => ({ zone, day })));
    expect(cases.length).toBeGreaterThan(40);
    fc.assert(
      fc.property(fc.constantFrom(...cases), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: -1, max: 1 }), ({ zone, day }, h, m, shift) => {
        const localDay = Math.floor(wallOf(zone, day + 12 * 3_600_000) / DAY) + shift;
        const target = localDay * DAY + (h * 60 + m) * 60_000;
        const spec = compiled({ cron: `${m} ${h} * * *`, timezone: zone });
        const expected = oracle(zone, target);
        // the slot after "just before the day began" lands on this day's target
        const got = nextSlot(spec, oracle(zone, localDay * DAY) - 1);
        expect({ zone, h, m, got: got === null ? null : iso(got) }).toEqual({ zone, h, m, got: iso(expected) });
        // and a repeated wall time does not run a second time
        const again = nextSlot(spec, expected);
        expect(again! - expected).toBeGreaterThan(20 * 3_600_000);
      }),
      { numRuns: 1000 },
    );
  }, 60_000);
});

describe('spec and policy checks', () => {
  it('refuses a bad cron, a 4- or 7-field cron, an unknown zone and reversed bounds, keyed by member', () => {
    const keys = (spec: unknown) => {
      const c = checkScheduleSpec(spec);
      return c.ok ? [] : c.issues.map((i) => i.key);
    };
    expect(keys({ cron: '61 * * * *' })).toEqual(['spec.cron']);
    expect(keys({ cron: '* * * *' })).toEqual(['spec.cron']);
    expect(keys({ cron: '0 0 * * * * *' })).toEqual(['spec.cron']);
    expect(keys({ cron: '0 * * * *', timezone: 'Mars/Olympus' })).toEqual(['spec.timezone']);
    expect(keys({ every: 'PT15M', startAt: '2026-01-02T00:00:00Z', endAt: '2026-01-01T00:00:00Z' })).toEqual(['spec.endAt']);
    expect(keys({})).toEqual(['spec.cron']);
    expect(keys({ every: 'PT0.5S' })).toEqual(['spec.every']);
    expect(keys({ cron: '0 0 * * * *', timezone: 'Europe/Paris', every: 'PT15M', jitter: 'PT10S' })).toEqual([]);
  });

  it('fills the policy defaults and refuses unknown overlap or catch-up modes', () => {
    expect(checkSchedulePolicy(undefined)).toEqual({ ok: true, value: { overlap: 'skip', catchup: { window: 'PT1H', mode: 'latest' }, pauseOnFailure: false } });
    expect(checkSchedulePolicy({ overlap: 'bufferAll', catchup: { mode: 'all' } })).toMatchObject({ ok: true, value: { overlap: 'bufferAll', catchup: { window: 'PT1H', mode: 'all' } } });
    expect(checkSchedulePolicy({ overlap: 'sometimes' })).toMatchObject({ ok: false, issues: [{ key: 'policy.overlap' }] });
    expect(checkSchedulePolicy({ overlapp: 'skip', catchup: { windw: 'PT1H' } })).toMatchObject({ ok: false, issues: [{ key: 'policy.overlapp' }, { key: 'policy.catchup.windw' }] });
    expect(checkSchedulePolicy({ catchup: { window: 'soon', mode: 'first' } })).toMatchObject({ ok: false, issues: [{ key: 'policy.catchup.window' }, { key: 'policy.catchup.mode' }] });
  });
});

describe('every, bounds, jitter, catch-up and overlap', () => {
  it('counts every from startAt and stops at endAt', () => {
    const spec = compiled({ every: 'PT15M', startAt: '2026-01-01T00:05:00Z', endAt: '2026-01-01T01:00:00Z' });
    expect(slotsBetween(spec, 0, Number.MAX_SAFE_INTEGER, 10).map(iso)).toEqual([
      '2026-01-01T00:05:00.000Z', '2026-01-01T00:20:00.000Z', '2026-01-01T00:35:00.000Z', '2026-01-01T00:50:00.000Z',
    ]);
  });

  it('jitters a slot by the same amount every time, below the bound, and differently across slots', () => {
    const a = slotJitterMs('s-1', 1000, 60_000);
    expect(slotJitterMs('s-1', 1000, 60_000)).toBe(a);
    const all = Array.from({ length: 200 }, (_, i) => slotJitterMs('s-1', i * 60_000, 60_000));
    expect(all.every((j) => j >= 0 && j < 60_000)).toBe(true);
    expect(new Set(all).size).toBeGreaterThan(150);
    expect(slotJitterMs('s-1', 1000, 0)).toBe(0);
  });

  it('after 3 h down with every PT5M and catchup {PT1H, latest}: one catch-up run, the others skippedCatchup', () => {
    const spec = compiled({ every: 'PT5M' });
    const down = at('2026-01-01T00:00:00Z');
    const now = down + 3 * 3_600_000 + 30_000 + 1;
    const due = slotsBetween(spec, down, now, 1000);
    expect(due).toHaveLength(36);
    const v = catchupVerdicts(due, due.at(-1)!, now, { windowMs: 3_600_000, mode: 'latest' }, 10_000);
    expect(v.filter((x) => x.start)).toEqual([{ slotAt: due.at(-1), start: true }]);
    const all = catchupVerdicts(due, due.at(-1)!, now, { windowMs: 3_600_000, mode: 'all' }, 10_000);
    expect(all.filter((x) => x.start)).toHaveLength(12);
    const none = catchupVerdicts(due, due.at(-1)!, now, { windowMs: 3_600_000, mode: 'none' }, 10_000);
    expect(none.filter((x) => x.start)).toHaveLength(0);
    expect(catchupVerdicts([now - 5_000], now - 5_000, now, { windowMs: 0, mode: 'none' }, 10_000)).toEqual([{ slotAt: now - 5_000, start: true }]);
  });

  it('decides overlap per policy from live runs and buffered slots', () => {
    expect(['skip', 'bufferOne', 'bufferAll', 'cancelPrevious', 'allowAll'].map((p) => overlapVerdict(p as never, 0, 0))).toEqual(['start', 'start', 'start', 'start', 'start']);
    expect(overlapVerdict('skip', 1, 0)).toBe('skippedOverlap');
    expect(overlapVerdict('bufferOne', 1, 0)).toBe('buffered');
    expect(overlapVerdict('bufferOne', 1, 1)).toBe('skippedOverlap');
    expect(overlapVerdict('bufferAll', 1, 3)).toBe('buffered');
    expect(overlapVerdict('bufferAll', 0, 1)).toBe('buffered');
    expect(overlapVerdict('cancelPrevious', 2, 0)).toBe('cancelPrevious');
    expect(overlapVerdict('allowAll', 5, 0)).toBe('start');
  });

  it('names the run of a slot schedule:<id>:<slot ISO>', () => {
    expect(slotRequestId('abc', at('2026-03-08T07:00:00Z'))).toBe('schedule:abc:2026-03-08T07:00:00.000Z');
  });
});
