import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { runTimeline, type TimelineEvent } from './timeline';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();
const ev = (s: number, kind: string, nodeKey: string | null, detail: unknown = {}): TimelineEvent => ({ kind, nodeKey, at: at(s), detail });

describe('runTimeline', () => {
  it('gives each node its queued, running and waiting spans with attempts, and its end', () => {
    const t = runTimeline([
      ev(0, 'run.started', null),
      ev(0, 'node.queued', 'start'),
      ev(1, 'node.started', 'start', { attempt: 1 }),
      ev(2, 'node.completed', 'start'),
      ev(2, 'node.queued', 'tool'),
      ev(3, 'node.started', 'tool', { attempt: 1 }),
      ev(5, 'node.failed', 'tool', { attempt: 1, retrying: true }),
      ev(5, 'node.retried', 'tool', { attempt: 2 }),
      ev(6, 'node.queued', 'tool', { attempt: 2 }),
      ev(7, 'node.started', 'tool', { attempt: 2 }),
      ev(9, 'node.completed', 'tool', { attempt: 2 }),
      ev(9, 'node.queued', 'review'),
      ev(10, 'node.started', 'review'),
      ev(10, 'gate.requested', 'review'),
      ev(20, 'node.steered', 'review'),
    ]);
    expect(t.map((n) => n.nodeKey)).toEqual(['start', 'tool', 'review']);
    expect(t[0]).toEqual({
      nodeKey: 'start',
      spans: [
        { kind: 'queued', attempt: 1, from: at(0), to: at(1) },
        { kind: 'running', attempt: 1, from: at(1), to: at(2) },
      ],
      end: { status: 'Succeeded', at: at(2) },
    });
    expect(t[1]!.spans.map((s) => `${s.kind}#${s.attempt} ${s.from.slice(17, 19)}-${s.to!.slice(17, 19)}`)).toEqual(['queued#1 02-03', 'running#1 03-05', 'queued#2 06-07', 'running#2 07-09']);
    expect(t[1]!.end).toEqual({ status: 'Succeeded', at: at(9) });
    // a person is still deciding: the wait is open, the node has not ended
    expect(t[2]!.spans.at(-1)).toEqual({ kind: 'waiting', attempt: 1, from: at(10), to: null });
    expect(t[2]!.end).toBeNull();
  });

  it('ends a node that failed for good, was skipped or cancelled', () => {
    const t = runTimeline([ev(0, 'node.queued', 'a'), ev(1, 'node.started', 'a'), ev(2, 'node.failed', 'a', { retrying: false }), ev(3, 'node.skipped', 'b'), ev(4, 'node.queued', 'c'), ev(5, 'node.cancelled', 'c')]);
    expect(t.map((n) => [n.nodeKey, n.end?.status, n.spans.length])).toEqual([
      ['a', 'Failed', 2],
      ['b', 'Skipped', 0],
      ['c', 'Cancelled', 1],
    ]);
  });

  it('never lets spans of a node overlap or run backwards, whatever the order of node events', () => {
    const kinds = ['node.queued', 'node.started', 'gate.requested', 'node.completed', 'node.failed', 'node.retried', 'node.steered', 'node.cancelled'];
    fc.assert(
      fc.property(fc.array(fc.record({ kind: fc.constantFrom(...kinds), node: fc.constantFrom('a', 'b'), retrying: fc.boolean() }), { maxLength: 40 }), (steps) => {
        const t = runTimeline(steps.map((s, i) => ev(i, s.kind, s.node, { retrying: s.retrying })));
        for (const n of t) {
          n.spans.forEach((s, i) => {
            if (s.to !== null) expect(s.to >= s.from).toBe(true);
            const next = n.spans[i + 1];
            if (next) expect(s.to !== null && s.to <= next.from).toBe(true);
          });
          // at most the last span is open
          expect(n.spans.slice(0, -1).every((s) => s.to !== null)).toBe(true);
        }
      }),
    );
  });
});
