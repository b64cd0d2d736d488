import { describe, expect, it } from 'vitest';
import { delayedStartOf } from './delayed-start';

const NOW = Date.UTC(2026, 0, 1);

describe('delayedStartOf', () => {
  it('reads startAt as an instant and delay as a span from now', () => {
    expect(delayedStartOf({ startAt: '2026-01-01T00:10:00+01:00' }, NOW)).toEqual({ ok: true, notBefore: NOW - 50 * 60_000 });
    expect(delayedStartOf({ delay: 'PT90S' }, NOW)).toEqual({ ok: true, notBefore: NOW + 90_000 });
    expect(delayedStartOf({}, NOW)).toEqual({ ok: true, notBefore: null });
  });

  it('refuses both at once, a malformed value, and a delay past the limit, keyed by the member', () => {
    expect(delayedStartOf({ startAt: '2026-01-02T00:00:00Z', delay: 'PT1M' }, NOW)).toMatchObject({ ok: false, issues: [{ key: 'startAt' }] });
    expect(delayedStartOf({ startAt: 'tomorrow' }, NOW)).toMatchObject({ ok: false, issues: [{ key: 'startAt' }] });
    expect(delayedStartOf({ delay: 'P1M' }, NOW)).toMatchObject({ ok: false, issues: [{ key: 'delay' }] });
    expect(delayedStartOf({ delay: 5 }, NOW)).toMatchObject({ ok: false, issues: [{ key: 'delay' }] });
    expect(delayedStartOf({ delay: 'P2D' }, NOW, 1)).toMatchObject({ ok: false, issues: [{ key: 'delay', message: expect.stringContaining('MAX_START_DELAY_DAYS') }] });
  });
});
