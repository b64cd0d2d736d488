/**
 * What a run event says about its node's status (CONTRACT §4 event kinds): a reader that
 * holds node runs as of some seq and reads the events after it (a live view between two
 * reads of the run) folds them with {@link nodeStatusAfterEvent} to show each node where
 * the planner left it. The planner's property test folds every tick's events over the rows
 * before the tick and finds the rows after it.
 */
import type { EventKind, NodeStatus } from '../model';

/** The status `kind` leaves its node in, whatever it was; null when the event does not say. */
export function nodeStatusAfterEvent(kind: EventKind | string, detail: unknown): NodeStatus | null {
  switch (kind) {
    case 'node.queued':
      return 'Queued';
    case 'node.started':
      return 'Running';
    case 'gate.requested':
      return 'WaitingForApproval';
    case 'node.completed':
      return 'Succeeded';
    case 'node.failed':
    case 'node.interrupted':
      // a retryable failure with budget left goes back to Pending (node.retried follows)
      return retrying(detail) ? 'Pending' : 'Failed';
    case 'node.retried':
      return 'Pending';
    case 'node.skipped':
      return 'Skipped';
    case 'node.cancelled':
      return 'Cancelled';
    default:
      // node.steered (Pending only when it was in flight), node.overridden (node.completed follows),
      // gate.decided (node.completed follows), node.published, node.steer-ignored, run.*
      return null;
  }
}

/** The attempt an event names (`detail.attempt`), when it names one. */
export function attemptOfEvent(detail: unknown): number | null {
  const a = detail !== null && typeof detail === 'object' ? (detail as { attempt?: unknown }).attempt : undefined;
  return typeof a === 'number' && Number.isInteger(a) && a >= 0 ? a : null;
}

function retrying(detail: unknown): boolean {
  return detail !== null && typeof detail === 'object' && (detail as { retrying?: unknown }).retrying === true;
}
