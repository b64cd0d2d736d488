/**
 * A run's timeline from its events (CONTRACT §4 event kinds): for each node, in the order the
 * run reached them, the spans it spent queued, running and waiting on a person (a gate), each
 * with its attempt, and how it ended. A span still open when the events end has `to: null`
 * (a view draws it up to now). Events of other kinds (run.*, node.steered, …) change nothing.
 */
import { attemptOfEvent, nodeStatusAfterEvent } from './event-status';

export type TimelineSpanKind = 'queued' | 'running' | 'waiting';

export interface TimelineSpan {
  kind: TimelineSpanKind;
  attempt: number;
  from: string;
  /** null: still open when the events end */
  to: string | null;
}

export interface NodeTimeline {
  nodeKey: string;
  spans: TimelineSpan[];
  /** the node's final status and when, once it has one */
  end: { status: 'Succeeded' | 'Failed' | 'Skipped' | 'Cancelled'; at: string } | null;
}

export interface TimelineEvent {
  kind: string;
  nodeKey: string | null;
  at: string;
  detail: unknown;
}

const OPENS: Record<string, TimelineSpanKind> = { 'node.queued': 'queued', 'node.started': 'running', 'gate.requested': 'waiting' };

/** Folds `events` (in seq order) into one timeline per node. */
export function runTimeline(events: readonly TimelineEvent[]): NodeTimeline[] {
  const byNode = new Map<string, NodeTimeline & { attempt: number }>();
  for (const e of events) {
    if (e.nodeKey === null) continue;
    const opens = OPENS[e.kind];
    const status = nodeStatusAfterEvent(e.kind, e.detail);
    const ends = status === 'Succeeded' || status === 'Failed' || status === 'Skipped' || status === 'Cancelled';
    if (!opens && !ends && e.kind !== 'node.retried' && status !== 'Pending') continue;
    let t = byNode.get(e.nodeKey);
    if (!t) {
      t = { nodeKey: e.nodeKey, spans: [], end: null, attempt: 1 };
      byNode.set(e.nodeKey, t);
    }
    t.attempt = attemptOfEvent(e.detail) ?? t.attempt;
    const open = t.spans.at(-1);
    if (open && open.to === null) open.to = e.at;
    if (opens) {
      t.spans.push({ kind: opens, attempt: t.attempt, from: e.at, to: null });
      t.end = null;
    } else if (ends) {
      t.end = { status, at: e.at };
    }
  }
  return [...byNode.values()].map(({ nodeKey, spans, end }) => ({ nodeKey, spans, end }));
}
