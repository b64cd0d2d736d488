/**
 * Run and node-run state machines: tables (./node, ./run) and lookups over them, and which
 * operator verb applies in which state (./verbs).
 */
import { NODE_STATUSES, RUN_STATUSES } from '../model';
import type { NodeStatus, RunStatus } from '../model';
import { NODE_EVENTS, NODE_TRANSITIONS } from './node';
import type { NodeEvent } from './node';
import { RUN_EVENTS, RUN_TRANSITIONS } from './run';
import type { RunEvent } from './run';

export { NODE_EVENTS, NODE_TRANSITIONS, RUN_EVENTS, RUN_TRANSITIONS };
export { OPERATOR_VERBS, OPERABLE_RUN_STATUSES, REPAIRABLE_RUN_STATUSES, VERB_RULES, verbApplies, verbRefusal, verbTakesKind } from './verbs';
export { attemptOfEvent, nodeStatusAfterEvent } from './event-status';
export { runTimeline, type NodeTimeline, type TimelineEvent, type TimelineSpan, type TimelineSpanKind } from './timeline';
export type { NodeVerbRule, OperatorVerb, RunVerbRule, VerbRule, VerbState } from './verbs';
export type { NodeEvent, RunEvent };

type Table<S extends string, E extends string> = Record<E, Partial<Record<S, S>>>;

function next<S extends string, E extends string>(table: Table<S, E>, from: S, event: E): S | null {
  if (!Object.prototype.hasOwnProperty.call(table, event)) return null;
  const row = table[event];
  return Object.prototype.hasOwnProperty.call(row, from) ? (row[from] ?? null) : null;
}

function edges<S extends string, E extends string>(table: Table<S, E>, events: readonly E[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) for (const [from, to] of Object.entries(table[e])) out.add(`${from}>${String(to)}`);
  return out;
}

function closure<S extends string>(statuses: readonly S[], direct: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const start of statuses) {
    const seen = new Set<S>();
    const todo: S[] = [start];
    while (todo.length > 0) {
      const s = todo.pop() as S;
      for (const t of statuses) {
        if (!seen.has(t) && direct.has(`${s}>${t}`)) {
          seen.add(t);
          todo.push(t);
          out.add(`${start}>${t}`);
        }
      }
    }
  }
  return out;
}

const NODE_EDGES = edges<NodeStatus, NodeEvent>(NODE_TRANSITIONS, NODE_EVENTS);
const RUN_EDGES = edges<RunStatus, RunEvent>(RUN_TRANSITIONS, RUN_EVENTS);
const NODE_REACH = closure(NODE_STATUSES, NODE_EDGES);
const RUN_REACH = closure(RUN_STATUSES, RUN_EDGES);

/** The status `event` moves a node run in `from` to, or null when the event is refused there. */
export function nextNodeStatus(from: NodeStatus, event: NodeEvent): NodeStatus | null {
  return next<NodeStatus, NodeEvent>(NODE_TRANSITIONS, from, event);
}

/** The status `event` moves a run in `from` to, or null when the event is refused there. */
export function nextRunStatus(from: RunStatus, event: RunEvent): RunStatus | null {
  return next<RunStatus, RunEvent>(RUN_TRANSITIONS, from, event);
}

/** True when one node event moves `from` to `to` (a status never "moves" to itself). */
export function canTransitionNode(from: NodeStatus, to: NodeStatus): boolean {
  return NODE_EDGES.has(`${from}>${to}`);
}

/** True when one run event moves `from` to `to` (a status never "moves" to itself). */
export function canTransitionRun(from: RunStatus, to: RunStatus): boolean {
  return RUN_EDGES.has(`${from}>${to}`);
}

/** True when a chain of one or more node events leads from `from` to `to` (one tick's net move). */
export function canReachNode(from: NodeStatus, to: NodeStatus): boolean {
  return NODE_REACH.has(`${from}>${to}`);
}

/** True when a chain of one or more run events leads from `from` to `to` (one tick's net move). */
export function canReachRun(from: RunStatus, to: RunStatus): boolean {
  return RUN_REACH.has(`${from}>${to}`);
}

/** The events that move a node run out of `from`, in table order. */
export function nodeEventsFrom(from: NodeStatus): NodeEvent[] {
  return NODE_EVENTS.filter((e) => nextNodeStatus(from, e) !== null);
}

/** The events that move a run out of `from`, in table order. */
export function runEventsFrom(from: RunStatus): RunEvent[] {
  return RUN_EVENTS.filter((e) => nextRunStatus(from, e) !== null);
}
