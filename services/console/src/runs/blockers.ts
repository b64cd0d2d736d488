/**
 * "Why isn't this run moving?" in words: one line per blocker of `GET /v1/runs/{id}/blockers`
 * (the pure `blockers` of libs/graph decides them; this only says them).
 */
import type { Blocker } from '@flowline/client';

const list = (v: unknown): string => (Array.isArray(v) && v.length > 0 ? v.map(String).join(', ') : 'its inputs');
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const time = (v: unknown): string | null => {
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : null;
};
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** What a person is asked for, by the node's pending decision kind. */
export function decisionKindText(kind: unknown): string {
  return kind === 'Answer' ? 'an answer' : kind === 'Operator' ? 'an operator' : kind === 'ToolCall' ? 'a tool call approval' : 'a decision';
}

/** What `b`'s node waits for, as one sentence. */
export function describeBlocker(b: Blocker): string {
  const d = b.details;
  switch (b.kind) {
    case 'shardOwner':
      return `No dispatcher owns shard ${String(d.shard ?? '?')}${str(d.owner) ? ` (last owner ${String(d.owner)})` : ''}: the run moves once a dispatcher takes the shard.`;
    case 'runSlot': {
      const ahead = num(d.ahead);
      return `The tenant's run slots are all taken${num(d.limit) !== null ? ` (${String(d.active ?? '?')} of ${String(d.limit)})` : ''}${ahead !== null ? `; ${ahead} run${ahead === 1 ? '' : 's'} ahead` : ''}.`;
    }
    case 'concurrencyKey': {
      const ahead = num(d.ahead);
      return `Its concurrency key ${str(d.key) ?? ''} = ${str(d.value) ?? '?'} already has ${String(d.live ?? '?')} of ${String(d.limit ?? '?')} live runs${ahead ? `; ${ahead} run${ahead === 1 ? '' : 's'} of the key ahead` : ''}.`;
    }
    case 'cancelDrain':
      return `Cancelled: waiting for its worker to confirm${time(d.deadlineAt) ? ` (until ${time(d.deadlineAt)})` : ''}.`;
    case 'runCancelling':
      return 'The run is cancelling.';
    case 'upstream':
      return `Waiting on upstream: ${list(d.waitingOn)}.`;
    case 'join':
      return `Join (${typeof d.joinPolicy === 'object' ? JSON.stringify(d.joinPolicy) : String(d.joinPolicy ?? 'All')}) has ${String(d.satisfied ?? '?')} of ${String(d.needed ?? '?')}: waiting on ${list(d.waitingOn)}.`;
    case 'heldDecision':
      return `An upstream decision is held for an operator: ${list(d.waitingOn)}.`;
    case 'timer':
      // a parked Wait is Running with no worker; a node backing off before a retry is not
      return b.status === 'Running'
        ? `A Wait on a timer${time(d.until) ? `: it fires at ${time(d.until)}` : ''}.`
        : `Backing off before its next attempt${time(d.until) ? `, until ${time(d.until)}` : ''}.`;
    case 'signal':
      return `A Wait on a signal on channel ${str(d.channel) ?? '?'}.`;
    case 'event':
      return `A Wait on an event named ${str(d.event) ?? '?'}.`;
    case 'token':
      return `A Wait on a callback to its token${time(d.until) ? ` (it expires at ${time(d.until)})` : ''}.`;
    case 'wait': {
      const arms = Array.isArray(d.arms) ? (d.arms as Array<Record<string, unknown>>) : [];
      const named = arms.map((a) => (a.kind === 'signal' ? `signal ${String(a.channel)}` : a.kind === 'event' ? `event ${String(a.event)}` : String(a.kind)));
      return `A Wait on ${d.mode === 'all' ? 'all' : 'any'} of: ${named.join(', ') || 'its arms'}${time(d.until) ? `; it wakes at ${time(d.until)}` : ''}.`;
    }
    case 'branchPlace':
      return `Waiting for a place: ${String(d.working ?? '?')} of the ${String(d.maxConcurrency ?? '?')} branches Parallel ${str(d.parallel) ?? '?'} allows at once are working.`;
    case 'breakpoint':
      return 'A breakpoint holds it: step it or remove the breakpoint.';
    case 'runPaused':
      return 'The run is paused: resume it, or step.';
    case 'laneBacklog': {
      const where = d.window === 'held' ? 'held in the dispatch window' : `queued on the ${String(d.lane ?? '')} lane`.replace('  ', ' ');
      const pos = num(d.position);
      const depth = num(d.depth);
      return `${where[0]!.toUpperCase()}${where.slice(1)}${pos !== null ? `: position ${pos}${depth !== null ? ` of ${depth}` : ''}` : ''}.`;
    }
    case 'admission':
      return 'Waiting for provider capacity (tokens per minute or concurrency).';
    case 'worker':
      return 'Running on a worker.';
    case 'child':
      return `Waiting for its child run${str(d.childRunId) ? ` ${String(d.childRunId).slice(0, 8)}` : ''}${str(d.childStatus) ? ` (${String(d.childStatus)})` : ''}.`;
    case 'gate':
      return `Waiting for a person: ${decisionKindText(d.decisionKind)}${str(d.tool) ? ` (${String(d.tool)})` : ''}.`;
    case 'budgetExhausted':
      return d.budget === 'MAX_TOTAL_ATTEMPTS'
        ? `Never runs: the run spent its retry budget (${String(d.spent ?? '?')} of ${String(d.limit ?? '?')} retries, MAX_TOTAL_ATTEMPTS). Retry the failed node to reopen the run.`
        : `Never runs: the run went past its budget${str(d.reason) ? ` (${String(d.reason)})` : ''}.`;
    case 'tick':
      return `Waiting for the dispatcher's next tick${str(d.reason) ? `: ${String(d.reason)}` : ''}.`;
    default:
      return `Waiting (${String(b.kind)}).`;
  }
}
