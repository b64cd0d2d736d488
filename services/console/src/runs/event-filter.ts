/**
 * The run's events narrowed as a person asks: by node, by kind, and by a text found in the
 * kind, the node or the detail's JSON. Pure, so the Events tab and the timeline pane share it.
 */
import type { LiveEvent } from '@flowline/client';

export interface EventFilter {
  /** only events of this node ('' or undefined: any; RUN_EVENTS: the run's own, no node) */
  nodeKey?: string;
  /** only events of this kind (`node.failed`) or family (`node.`) */
  kind?: string;
  /** text every shown event holds somewhere (case-insensitive) */
  text?: string;
}

/** The node choice that keeps only the run's own events (those with no node). */
export const RUN_EVENTS = '(run)';

/** Whether one event passes the filter. */
export function eventMatches(e: LiveEvent, f: EventFilter): boolean {
  if (f.nodeKey) {
    if (f.nodeKey === RUN_EVENTS ? e.nodeKey !== null && e.nodeKey !== undefined : e.nodeKey !== f.nodeKey) return false;
  }
  if (f.kind && (f.kind.endsWith('.') ? !e.kind.startsWith(f.kind) : e.kind !== f.kind)) return false;
  const t = f.text?.trim().toLowerCase();
  if (t) {
    const hay = `${e.kind} ${e.nodeKey ?? ''} ${e.detail === undefined ? '' : JSON.stringify(e.detail)}`.toLowerCase();
    if (!hay.includes(t)) return false;
  }
  return true;
}

/** The choices the filter offers over `events`: the nodes in the order they first appear, the kinds sorted. */
export function eventChoices(events: readonly LiveEvent[]): { nodes: string[]; kinds: string[] } {
  const nodes = new Set<string>();
  const kinds = new Set<string>();
  for (const e of events) {
    if (e.nodeKey) nodes.add(e.nodeKey);
    kinds.add(e.kind);
  }
  return { nodes: [...nodes], kinds: [...kinds].sort() };
}
