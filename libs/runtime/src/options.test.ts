import { describe, expect, it } from 'vitest';
import { parseConfig, parseConfigOrThrow } from './config';
import { coreOptions, defineConfig, toCoreOptions } from './options';

const core = defineConfig(coreOptions);

describe('CANCEL_DRAIN_GRACE_MS', () => {
  it('defaults to 10 s and reaches the planner as cancelDrainGraceMs', () => {
    expect(toCoreOptions(parseConfigOrThrow(core, {})).cancelDrainGraceMs).toBe(10_000);
    expect(toCoreOptions(parseConfigOrThrow(core, { CANCEL_DRAIN_GRACE_MS: '1500' })).cancelDrainGraceMs).toBe(1_500);
  });

  it('is refused at boot below 100 ms, above a day, or when not an integer, naming the option', () => {
    for (const bad of ['50', '86400001', '1.5', 'soon']) {
      const r = parseConfig(core, { CANCEL_DRAIN_GRACE_MS: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map((i) => i.split(':')[0])).toEqual(['CANCEL_DRAIN_GRACE_MS']);
    }
  });
});
