import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseGraph } from '../parse';
import { OPTS } from '../parse/fixtures/builders';
import type { Json } from '../model';
import { edge, graphOf, node, rowOf, snapshotOf, step } from './test-kit';
import type { Intent, RunSignal, RunSnapshot, RunWaitpoint, WaitEvent } from './types';

/** s → w (Wait config) → a (on kind signal) | b (otherwise), both End */
const routed = (config: Record<string, Json>) => ({
  ...graphOf(
    [
      node('s', 'Start'),
      node('w', 'Wait', { config }),
      node('a', 'End', { config: { outcome: 'by-signal', resultPath: 'input.output' } }),
      node('b', 'End', { config: { outcome: 'other', resultPath: 'input.output' } }),
    ],
    [
      edge('1', 's', 'w'),
      edge('2', 'w', 'a', { condition: { path: 'output.kind', op: 'Eq', value: 'signal' } }),
      edge('3', 'w', 'b', { default: true }),
    ],
  ),
  signals: { review: { schema: null } },
});
const sig = (id: string, at: number, payload: Json, channel = 'review'): RunSignal => ({ id, channel, payload, at });
const withSignals = (snap: RunSnapshot, ...signals: RunSignal[]): RunSnapshot => ({ ...snap, signals: [...(snap.signals ?? []), ...signals] });
/** the snapshot with waitpoint `id` completed at `at` with `payload` (what a callback commits) */
const completed = (snap: RunSnapshot, id: string, at: number, payload: Json): RunSnapshot => ({
  ...snap,
  waitpoints: snap.waitpoints!.map((w): RunWaitpoint => (w.id === id ? { ...w, status: 'completed', completedAt: at, payload } : w)),
});
const out = (snap: RunSnapshot, key = 'w') => rowOf(snap, key).output?.output as Record<string, Json>;

describe('composite Wait: any', () => {
  const anySignalTimer = () => routed({ any: [{ signal: 'review' }, { timer: 'PT2S' }] });

  it('fires on the signal, names it in fired, routes on output.kind and leaves the timer withdrawn', () => {
    const parked = step(snapshotOf(anySignalTimer()), 0);
    expect(rowOf(parked.snap, 'w')).toMatchObject({ status: 'Running', deadlineAt: 2000 });
    expect(parked.result.wakeAt).toBe(2000);
    const r = step(withSignals(parked.snap, sig('x', 500, { ok: true })), 600);
    expect(out(r.snap)).toEqual({
      mode: 'any', index: 0, kind: 'signal', payload: { ok: true }, at: '1970-01-01T00:00:00.500Z',
      fired: [{ index: 0, kind: 'signal', signal: 'review', payload: { ok: true }, at: '1970-01-01T00:00:00.500Z' }],
    });
    expect(r.result.consumedSignals).toEqual([{ signalId: 'x', nodeKey: 'w' }]);
    expect(r.result.wakeAt).toBeNull();
    expect(rowOf(r.snap, 'a').status).toBe('Succeeded');
    expect(rowOf(r.snap, 'b').status).toBe('Skipped');
  });

  it('fires on the timer and leaves a signal sent later unconsumed for a later Wait', () => {
    const parked = step(snapshotOf(anySignalTimer()), 0);
    const r = step(parked.snap, 2000);
    expect(out(r.snap)).toMatchObject({ kind: 'timer', index: 1, fired: [{ index: 1, kind: 'timer', timer: 'PT2S', payload: null }] });
    expect(rowOf(r.snap, 'b').status).toBe('Succeeded');
    const after = step(withSignals(r.snap, sig('late', 2100, 1)), 2200);
    expect(after.result.consumedSignals).toBeUndefined();
    expect(after.snap.signals).toEqual([sig('late', 2100, 1)]);
  });

  it('lets a delivered signal outrank a timer due in the same tick (the delivery committed first)', () => {
    const parked = step(snapshotOf(anySignalTimer()), 0);
    const r = step(withSignals(parked.snap, sig('x', 2500, 'late but kept')), 3000);
    expect(out(r.snap)).toMatchObject({ kind: 'signal', payload: 'late but kept' });
  });

  it('takes only a signal that passes the filter, over the payload and the run input', () => {
    const g = routed({ any: [{ signal: 'review', filter: { path: 'payload.order', op: 'Eq', value: 7 } }, { timer: 'PT1H' }] });
    const parked = step(snapshotOf(g, { order: 7 }), 0);
    const r = step(withSignals(parked.snap, sig('no', 1, { order: 8 }), sig('yes', 2, { order: 7 })), 10);
    expect(r.result.consumedSignals).toEqual([{ signalId: 'yes', nodeKey: 'w' }]);
    expect(r.snap.signals).toEqual([sig('no', 1, { order: 8 })]);
    const byInput = routed({ signal: 'review', filter: { path: 'input.order', op: 'Eq', value: 7 } });
    expect(step(withSignals(snapshotOf(byInput, { order: 6 }), sig('z', 1, {})), 5).result.consumedSignals).toBeUndefined();
    expect(step(withSignals(snapshotOf(byInput, { order: 7 }), sig('z', 1, {})), 5).result.consumedSignals).toEqual([{ signalId: 'z', nodeKey: 'w' }]);
  });

  it('mints a token waitpoint with an expiry and a waitpoint.created event, and revokes it when the timer wins', () => {
    const g = routed({ any: [{ token: { timeout: 'PT1H', schema: { type: 'object' } } }, { timer: 'PT2S' }] });
    const parked = step(snapshotOf(g), 0);
    const [wp] = parked.result.createdWaitpoints!;
    expect(wp).toMatchObject({ nodeKey: 'w', index: 0, kind: 'token', expiresAt: 3_600_000, schema: { type: 'object' }, singleUse: true });
    expect(parked.result.events.find((e) => e.kind === 'waitpoint.created')).toEqual({ kind: 'waitpoint.created', nodeKey: 'w', detail: { waitpointId: wp!.id, index: 0, expiresAt: '1970-01-01T01:00:00.000Z' } });
    expect(rowOf(parked.snap, 'w').deadlineAt).toBe(2000);
    const r = step(parked.snap, 2000);
    expect(out(r.snap)).toMatchObject({ kind: 'timer' });
    expect(r.result.resolvedWaitpoints).toEqual([{ id: wp!.id, nodeKey: 'w', status: 'revoked' }]);
    expect(r.snap.waitpoints).toBeUndefined();
  });

  it('fires on a completed token with its payload and settles the waitpoint completed', () => {
    const g = routed({ any: [{ token: { timeout: 'PT1H' } }, { timer: 'PT2S' }] });
    const parked = step(snapshotOf(g), 0);
    const id = parked.result.createdWaitpoints![0]!.id;
    const r = step(completed(parked.snap, id, 1500, { paid: true }), 2500);
    expect(out(r.snap)).toMatchObject({ kind: 'token', payload: { paid: true }, fired: [{ index: 0, kind: 'token', token: id, payload: { paid: true }, expired: false, revoked: false }] });
    expect(r.result.resolvedWaitpoints).toEqual([{ id, nodeKey: 'w', status: 'completed' }]);
  });

  it('fires a lone token Wait as expired once its timeout passes', () => {
    const parked = step(snapshotOf(routed({ token: { timeout: 'PT10S' } })), 0);
    expect(parked.result.wakeAt).toBe(10_000);
    const id = parked.result.createdWaitpoints![0]!.id;
    expect(step(parked.snap, 9_999).result.nodes).toEqual([]);
    const r = step(parked.snap, 10_000);
    expect(out(r.snap)).toEqual({ fired: 'token', token: id, payload: null, expired: true, revoked: false, at: '1970-01-01T00:00:10.000Z' });
    expect(r.result.resolvedWaitpoints).toEqual([{ id, nodeKey: 'w', status: 'expired' }]);
  });

  it('fires a token arm at once when its waitpoint was revoked (revoked: true), not waiting for its expiry', () => {
    const parked = step(snapshotOf(routed({ token: { timeout: 'PT1H' } })), 0);
    const id = parked.result.createdWaitpoints![0]!.id;
    const revoked = { ...parked.snap, waitpoints: parked.snap.waitpoints!.map((w): RunWaitpoint => ({ ...w, status: 'revoked', completedAt: 50 })) };
    const r = step(revoked, 60);
    expect(out(r.snap)).toMatchObject({ fired: 'token', token: id, payload: null, expired: false, revoked: true });
    expect(r.result.resolvedWaitpoints).toEqual([{ id, nodeKey: 'w', status: 'revoked' }]);
  });

  it('revokes the waitpoints of a Wait the run cancel ends', () => {
    const parked = step(snapshotOf(routed({ token: { timeout: 'PT1H' } })), 0);
    const id = parked.result.createdWaitpoints![0]!.id;
    const r = step({ ...parked.snap, intents: [{ id: 'c', kind: 'cancel', reason: null } as Intent] }, 10);
    expect(rowOf(r.snap, 'w').status).toBe('Cancelled');
    expect(r.result.resolvedWaitpoints).toEqual([{ id, nodeKey: 'w', status: 'revoked' }]);
  });

  it('takes an event of its name received since the Wait began that passes the filter; its data is the payload', () => {
    const g = routed({ any: [{ event: 'payment.settled', filter: { path: 'data.order', op: 'Eq', value: 'o-1' } }, { timer: 'PT1H' }] });
    const parked = step(snapshotOf(g), 100);
    const wp = parked.result.createdWaitpoints![0]!;
    expect(wp).toMatchObject({ kind: 'event', eventName: 'payment.settled', expiresAt: null, createdAt: 100 });
    const ev = (id: string, at: number, data: Json, name = 'payment.settled'): WaitEvent => ({ id, name, data, at });
    const snap = { ...parked.snap, waitEvents: [ev('old', 50, { order: 'o-1' }), ev('other', 150, { order: 'o-2' }), ev('n', 160, { order: 'o-1' }, 'payment.failed'), ev('hit', 170, { order: 'o-1' })] };
    const r = step(snap, 200);
    expect(out(r.snap)).toMatchObject({ kind: 'event', payload: { order: 'o-1' }, fired: [{ index: 0, kind: 'event', event: 'payment.settled', eventId: 'hit' }] });
    expect(r.result.resolvedWaitpoints).toEqual([{ id: wp.id, nodeKey: 'w', status: 'completed', payload: { order: 'o-1' }, eventId: 'hit' }]);
  });
});

describe('composite Wait: all', () => {
  it('fires only when every arm holds, naming each, and consumes its signals only then', () => {
    const g = routed({ all: [{ signal: 'review' }, { timer: 'PT2S' }] });
    const parked = step(snapshotOf(g), 0);
    const early = step(withSignals(parked.snap, sig('x', 100, 'yes')), 500);
    expect(rowOf(early.snap, 'w').status).toBe('Running');
    expect(early.result.consumedSignals).toBeUndefined();
    const r = step(early.snap, 2000);
    expect(out(r.snap)).toMatchObject({ mode: 'all', index: 0, kind: 'signal', fired: [{ index: 0, kind: 'signal', payload: 'yes' }, { index: 1, kind: 'timer' }], at: '1970-01-01T00:00:02.000Z' });
    expect(r.result.consumedSignals).toEqual([{ signalId: 'x', nodeKey: 'w' }]);
  });

  it('takes two distinct signals for two arms on one channel', () => {
    const g = routed({ all: [{ signal: 'review' }, { signal: 'review' }] });
    const one = step(withSignals(snapshotOf(g), sig('a', 1, 1)), 10);
    expect(rowOf(one.snap, 'w').status).toBe('Running');
    const two = step(withSignals(one.snap, sig('b', 20, 2)), 30);
    expect(two.result.consumedSignals).toEqual([{ signalId: 'a', nodeKey: 'w' }, { signalId: 'b', nodeKey: 'w' }]);
  });
});

describe('composite Wait config', () => {
  const doc = (config: Json) => ({
    signals: { review: {} },
    nodes: [{ key: 's', kind: 'Start' }, { key: 'w', kind: 'Wait', config }, { key: 'e', kind: 'End', config: { outcome: 'ok' } }],
    edges: [{ key: '1', from: 's', to: 'w' }, { key: '2', from: 'w', to: 'e' }],
  });
  const errors = (config: Json) => {
    const r = parseGraph(doc(config), OPTS);
    return r.ok ? [] : r.errors.map((e) => `${e.key}: ${e.message}`);
  };

  it('accepts every arm kind and the plain token and event forms', () => {
    expect(errors({ any: [{ signal: 'review', filter: { path: 'payload.ok', op: 'Eq', value: true } }, { token: { timeout: 'PT1H', schema: { type: 'object' }, singleUse: false } }, { timer: 'PT1H' }, { event: 'payment.settled', filter: { path: 'data.x', op: 'Exists' } }] })).toEqual([]);
    expect(errors({ all: [{ timer: '2030-01-01T00:00:00Z' }, { signal: 'review' }] })).toEqual([]);
    expect(errors({ token: { timeout: 'P1D' } })).toEqual([]);
    expect(errors({ event: 'order.paid', filter: { path: 'data.id', op: 'Exists' } })).toEqual([]);
  });

  it.each([
    [{ any: [] }, 'config.any must be a list of 1–16 arms'],
    [{ any: [{ signal: 'review', timer: 'PT1S' }] }, 'config.any.0 needs exactly one of signal, token, timer or event'],
    [{ any: [{ token: { schema: {} } }] }, 'config.any.0.token.timeout is required'],
    [{ any: [{ token: { timeout: 'PT1H', nope: 1 } }] }, "config.any.0.token: unknown member 'nope'"],
    [{ all: [{ timer: '10s' }] }, 'config.all.0.timer .*not an ISO-8601 duration'],
    [{ any: [{ signal: 'nope' }] }, "names channel 'nope'"],
    [{ any: [{ event: 'x', filter: { op: 'Eq', value: 1 } }] }, 'config.any.0.event.filter: condition has no path'],
    [{ any: [{ timer: 'PT1S', filter: { path: 'a', op: 'Exists' } }] }, "member 'filter' is not read by a timer arm"],
    [{ for: 'PT1S', filter: { path: 'a', op: 'Exists' } }, 'config.filter is read only beside'],
    [{ any: [{ token: { timeout: 'PT1H' } }], signal: 'review' }, 'cannot be given together'],
  ])('refuses %j with a keyed error', (config, text) => {
    expect(errors(config)).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^w: .*${text}`))]));
  });
});

describe('any [signal, timer PT2S]: exactly one arm wins (property)', () => {
  it('settles on one arm whatever the signal time and tick times, and consumes the signal exactly when it won', () => {
    const g = routed({ any: [{ signal: 'review' }, { timer: 'PT2S' }] });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4000 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 11 }),
        (signalAt, gaps, deliverAfter) => {
          let snap = step(snapshotOf(g), 0).snap;
          let now = 0;
          let delivered = false;
          const consumed: string[] = [];
          for (const [i, gap] of gaps.entries()) {
            now += gap;
            // the signal reaches the store once its time has come and from tick `deliverAfter` on
            if (!delivered && signalAt <= now && i >= deliverAfter) {
              snap = withSignals(snap, sig('s1', signalAt, 'p'));
              delivered = true;
            }
            const r = step(snap, now);
            consumed.push(...(r.result.consumedSignals ?? []).map((c) => c.signalId));
            snap = r.snap;
          }
          const row = rowOf(snap, 'w');
          if (row.status === 'Running') {
            // still parked: only while neither arm held at any tick
            expect(now < 2000 && !delivered).toBe(true);
            expect(consumed).toEqual([]);
            return;
          }
          expect(row.status).toBe('Succeeded');
          const o = row.output!.output as { fired: Array<{ kind: string }>; kind: string };
          expect(o.fired).toHaveLength(1);
          if (o.kind === 'signal') {
            expect(consumed).toEqual(['s1']);
            expect(snap.signals).toBeUndefined();
          } else {
            expect(o.kind).toBe('timer');
            expect(consumed).toEqual([]);
            if (delivered) expect(snap.signals).toEqual([sig('s1', signalAt, 'p')]);
          }
          // exactly one out-edge branch ran
          expect([rowOf(snap, 'a').status, rowOf(snap, 'b').status].sort()).toEqual(['Skipped', 'Succeeded']);
        },
      ),
      { numRuns: 500 },
    );
  });
});
