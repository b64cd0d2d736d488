/**
 * The console's one status colour system: every run and node status maps to a tone, and
 * badges, graph nodes and table rows all paint from the tone's CSS variables
 * (`--tone-<tone>-fg|bg|dot`, styles.css), so a status reads the same everywhere.
 */
export type Tone = 'pending' | 'queued' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'waiting';

const TONES: Record<string, Tone> = {
  // a delayed start waiting for its notBefore: it holds nothing, like a Queued node waits its turn
  Scheduled: 'queued',
  Pending: 'pending',
  Queued: 'queued',
  Running: 'running',
  Succeeded: 'succeeded',
  Completed: 'succeeded',
  Failed: 'failed',
  Skipped: 'skipped',
  Cancelled: 'cancelled',
  Cancelling: 'cancelled',
  WaitingForApproval: 'waiting',
  NotRun: 'skipped',
};

const LABELS: Record<string, string> = { WaitingForApproval: 'Waiting for approval', NotRun: 'Not run' };

/** What the run view shows for a node still Pending in a run that has ended: it never ran. */
export const NOT_RUN = 'NotRun';

/** A node's status as the run view shows it: Pending in an ended run reads {@link NOT_RUN}. */
export function shownNodeStatus(status: string, runEnded: boolean): string {
  return runEnded && status === 'Pending' ? NOT_RUN : status;
}

/** The tone of a run or node status (unknown statuses read as pending). */
export function toneOf(status: string): Tone {
  return TONES[status] ?? 'pending';
}

/** Human text of a status. */
export function statusLabel(status: string): string {
  return LABELS[status] ?? status;
}

/** Statuses after which nothing changes on its own. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set(['Completed', 'Failed', 'Cancelled']);

/** A status pill: dot plus text; `data-status` carries the API's word. */
export function StatusBadge({ status, size = 'md' }: { status: string; size?: 'sm' | 'md' }) {
  return (
    <span className={`badge badge-${size} tone-${toneOf(status)}`} data-status={status}>
      <span className="badge-dot" aria-hidden="true" />
      {statusLabel(status)}
    </span>
  );
}
