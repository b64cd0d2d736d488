/**
 * The zod-free guards a live client uses agree with the server's zod schemas: on every
 * generated value (well-formed, near-miss and arbitrary) both accept or both refuse, and
 * an accepted value reads the same.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { asLiveErrorAck, asRunChangedPing } from './live-wire';
import { liveErrorAckSchema, runChangedPingSchema } from './live';

const anyValue = fc.oneof(fc.anything(), fc.constantFrom(Infinity, -Infinity, NaN, -0, 2 ** 53, 2 ** 53 - 1, '', 'x'.repeat(129)));

const pingLike = fc.record(
  {
    runId: fc.oneof(fc.string({ maxLength: 140 }), anyValue),
    seq: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -5, max: 2 ** 31 }), fc.double(), anyValue),
    kind: fc.oneof(fc.constantFrom('run', 'node', 'gate', 'Run', 'nodes', ''), anyValue),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

const ackLike = fc.record(
  {
    error: fc.oneof(
      fc.record(
        {
          code: fc.oneof(fc.constantFrom('NotFound', 'Forbidden', 'ValidationFailed', 'NodeStateConflict', 'TooManyRequests', 'Internal', 'Nope'), anyValue),
          message: fc.oneof(fc.string(), anyValue),
          retryAfterMs: fc.oneof(fc.double(), fc.integer(), anyValue),
          other: anyValue,
        },
        { requiredKeys: [] },
      ),
      anyValue,
    ),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

describe('live-wire guards', () => {
  it('accept exactly the pings runChangedPingSchema accepts, reading the same', () => {
    fc.assert(
      fc.property(fc.oneof(pingLike, anyValue), (raw) => {
        const z = runChangedPingSchema.safeParse(raw);
        const g = asRunChangedPing(raw);
        expect(g !== null).toBe(z.success);
        if (z.success) expect(g).toEqual(z.data);
      }),
      { numRuns: 5_000 },
    );
  });

  it('accept exactly the acks liveErrorAckSchema accepts, reading the same', () => {
    fc.assert(
      fc.property(fc.oneof(ackLike, anyValue), (raw) => {
        const z = liveErrorAckSchema.safeParse(raw);
        const g = asLiveErrorAck(raw);
        expect(g !== null).toBe(z.success);
        if (z.success) expect(g).toEqual(z.data);
      }),
      { numRuns: 5_000 },
    );
  });

  it('read a well-formed ping and ack', () => {
    expect(asRunChangedPing({ runId: 'r1', seq: 3, kind: 'node' })).toEqual({ runId: 'r1', seq: 3, kind: 'node' });
    expect(asRunChangedPing({ runId: 'r1', seq: 3, kind: 'node', x: 1 })).toBeNull();
    expect(asLiveErrorAck({ error: { code: 'TooManyRequests', message: 'slow down', retryAfterMs: 250 } })).toEqual({ error: { code: 'TooManyRequests', message: 'slow down', retryAfterMs: 250 } });
    expect(asLiveErrorAck({ error: { code: 'Teapot', message: 'no' } })).toBeNull();
  });
});
