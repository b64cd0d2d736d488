/**
 * The run state machine (CONTRACT §4, §5, §8) as data: event → (from → to). A run's
 * status is recomputed from its node rows after every tick; these are the moves that
 * recomputation (and the operator verbs) may make. A run created with a delayed start begins
 * Scheduled, every other run Pending. One tick may chain several events
 * (a Start → End graph goes Pending → Running → Completed in one commit): check a whole
 * tick with {@link canReachRun}. docs/state-machines.md draws this table.
 */
import type { RunStatus } from '../model';

/** Named run events, in table order. */
export const RUN_EVENTS = [
  'release',
  'start',
  'park',
  'unpark',
  'complete',
  'fail',
  'requestCancel',
  'cancel',
  'reopen',
  'quarantine',
  'expire',
] as const;
export type RunEvent = (typeof RUN_EVENTS)[number];

/**
 * Run transitions. Completed is final; Failed is left only by `reopen` (an operator retry
 * or complete of the node that failed it), and so is a Cancelled run whose cancel left
 * survivors (lane work whose worker never confirmed the cancel) once each is retried or
 * completed. Any other Cancelled run is final.
 */
export const RUN_TRANSITIONS = {
  /** a delayed start's `notBefore` came: it becomes an ordinary Pending run (fair share from here on) */
  release: { Scheduled: 'Pending' },
  /** a run slot was free (run.started) */
  start: { Pending: 'Running' },
  /** every live node waits on a person or an operator (run.waiting) */
  park: { Running: 'WaitingForApproval' },
  /** a decision landed and work is live again */
  unpark: { WaitingForApproval: 'Running' },
  /** nothing live, an End succeeded (run.completed) */
  complete: { Running: 'Completed', WaitingForApproval: 'Completed' },
  /** a node failed the run, or the run was refused at start: pinned graph invalid, output invalid (run.failed) */
  fail: { Pending: 'Failed', Running: 'Failed', WaitingForApproval: 'Failed' },
  /** cancel requested while work is live: drain first */
  requestCancel: { Running: 'Cancelling', WaitingForApproval: 'Cancelling' },
  /** cancelled before start, drained, or nothing live and no End reached (run.cancelled) */
  cancel: { Scheduled: 'Cancelled', Pending: 'Cancelled', Running: 'Cancelled', WaitingForApproval: 'Cancelled', Cancelling: 'Cancelled' },
  /** retry/complete of the failing node reopens a Failed run; of the last cancel survivor, a Cancelled one */
  reopen: { Failed: 'Running', Cancelled: 'Running' },
  /** the store kept refusing the run's tick (APPLY_FAILURE_LIMIT): Failed `Internal`, live work cancelled (run.failed) */
  quarantine: { Scheduled: 'Failed', Pending: 'Failed', Running: 'Failed', WaitingForApproval: 'Failed', Cancelling: 'Failed' },
  /** never admitted within PENDING_RUN_TTL_MS: Failed `Expired` (run.failed) */
  expire: { Pending: 'Failed' },
} as const satisfies Record<RunEvent, Partial<Record<RunStatus, RunStatus>>>;
