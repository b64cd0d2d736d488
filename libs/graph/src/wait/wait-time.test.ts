import { describe, expect, it } from 'vitest';
import { isoOf } from './civil-time';
import { parseIsoDuration, parseTimestamp, timerWakeAt } from './wait-time';

describe('Wait timer times', () => {
  it.each([
    ['PT2S', 2000],
    ['PT1.5S', 1500],
    ['PT30M', 1_800_000],
    ['PT2H', 7_200_000],
    ['P3D', 259_200_000],
    ['PT3D', 259_200_000],
    ['P1W', 604_800_000],
    ['P1DT1H', 90_000_000],
    ['PT0S', 0],
  ])('reads the ISO-8601 duration %s as %i ms', (text, ms) => {
    expect(parseIsoDuration(text)).toEqual({ ms });
  });

  it.each(['P', 'PT', '3D', 'P1Y', 'P2M', 'PT1.5H30M', 'pt1s', 'P-1D', 'PT1S '])('refuses %j as a duration, saying why', (text) => {
    expect(parseIsoDuration(text)).toEqual({ error: expect.stringContaining(`'${text}'`) });
  });

  it('reads RFC 3339 timestamps with their offset and refuses days that do not exist', () => {
    expect(parseTimestamp('2030-01-31T09:00:00Z')).toEqual({ at: Date.UTC(2030, 0, 31, 9) });
    expect(parseTimestamp('2030-01-31T10:00:00.250+01:00')).toEqual({ at: Date.UTC(2030, 0, 31, 9, 0, 0, 250) });
    expect(parseTimestamp('2030-02-30T09:00:00Z')).toEqual({ error: expect.stringContaining('no real instant') });
    expect(parseTimestamp('2030-01-31 09:00')).toEqual({ error: expect.stringContaining('not an RFC 3339 timestamp') });
  });

  it('counts for from now, reads until literally or through a dot path, and says what a path lacks', () => {
    const doc = { run: { input: { due: '2030-01-31T09:00:00Z', n: 3 } } };
    expect(timerWakeAt({ for: 'PT2S' }, doc, 1000)).toEqual({ at: 3000 });
    expect(timerWakeAt({ until: '2030-01-31T09:00:00Z' }, doc, 0)).toEqual({ at: Date.UTC(2030, 0, 31, 9) });
    expect(timerWakeAt({ until: 'run.input.due' }, doc, 0)).toEqual({ at: Date.UTC(2030, 0, 31, 9) });
    expect(timerWakeAt({ until: 'run.input.missing' }, doc, 0)).toEqual({ error: expect.stringContaining('resolves to nothing') });
    expect(timerWakeAt({ until: 'run.input.n' }, doc, 0)).toEqual({ error: expect.stringContaining('holds number') });
    expect(timerWakeAt({}, doc, 0)).toBeNull();
  });
});

describe('civil time without the Date global', () => {
  it('agrees with the platform clock on epoch ms and ISO text across eras, leap days and offsets', () => {
    for (const ms of [0, 951_782_400_000, 1_709_164_800_123, 4_102_444_799_999, -86_400_001, 253_402_300_799_000]) {
      expect(isoOf(ms)).toBe(new Date(ms).toISOString());
      expect(parseTimestamp(new Date(ms).toISOString())).toEqual({ at: ms });
    }
    expect(parseTimestamp('2024-02-29T23:30:00-01:30')).toEqual({ at: Date.parse('2024-02-29T23:30:00-01:30') });
    expect(parseTimestamp('2023-02-29T00:00:00Z')).toEqual({ error: expect.stringContaining('no real instant') });
  });
});
