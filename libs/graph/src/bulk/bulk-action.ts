/**
 * Bulk actions by filter: the pure decisions. Which runs an action applies to
 * (the rule the store's submit statement is built from), the request's rules, each run's
 * outcome from what its verb's store call answered, the job's status from its counts, and
 * the deterministic id that makes re-applying a batch after a crash a replay.
 */
import { RUN_STATUSES, type Issue, type RunStatus } from '../model';
import { OPERABLE_RUN_STATUSES, VERB_RULES } from '../state-machine';
import { checkRunSearch, isEmptySearch, type RunSearch } from './run-search';
import type { MetadataLimits } from './metadata';
import { BULK_MIGRATE_MEMBERS, checkBulkMigrate, type BulkMigrateInput, type BulkMigrateOptions } from './bulk-migrate';

export const BULK_ACTIONS = ['cancel', 'retry-failed', 'resume', 'fork', 'migrate'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** Paused: a migrate job stopped after its canary share or on its error rate, until resumed. */
export const BULK_JOB_STATUSES = ['Pending', 'Running', 'Paused', 'Completed', 'Failed'] as const;
export type BulkJobStatus = (typeof BULK_JOB_STATUSES)[number];

/** What an action needs of a run to apply to it (at submission: the job's fixed set). */
export interface BulkActionRule {
  /** the run's status is one of these */
  runStatuses: readonly RunStatus[];
  /** the run must be paused */
  pausedOnly: boolean;
  /** the run must not be a child run (fork refuses child runs: ForkOfChildRun) */
  topLevelOnly: boolean;
}

/**
 * The rule of each action: cancel — a live run (the cancel verb's statuses); retry-failed —
 * a Failed run (each of its Failed nodes is retried); resume — a paused live run; fork — any
 * top-level run; migrate — a live run (the planner then decides whether it can move).
 */
export const BULK_ACTION_RULES: Readonly<Record<BulkAction, BulkActionRule>> = {
  cancel: { runStatuses: VERB_RULES.cancel.runStatuses, pausedOnly: false, topLevelOnly: false },
  'retry-failed': { runStatuses: ['Failed'], pausedOnly: false, topLevelOnly: false },
  resume: { runStatuses: OPERABLE_RUN_STATUSES, pausedOnly: true, topLevelOnly: false },
  fork: { runStatuses: RUN_STATUSES, pausedOnly: false, topLevelOnly: true },
  migrate: { runStatuses: VERB_RULES.cancel.runStatuses, pausedOnly: false, topLevelOnly: false },
};

/** The run as the rule sees it. */
export interface BulkCandidate {
  status: RunStatus;
  paused: boolean;
  parentRunId: string | null;
}

/** True when `action` applies to the run (the same test the submit statement makes in SQL). */
export function bulkActionApplies(action: BulkAction, run: BulkCandidate): boolean {
  const rule = BULK_ACTION_RULES[action];
  return rule.runStatuses.includes(run.status) && (!rule.pausedOnly || run.paused) && (!rule.topLevelOnly || run.parentRunId === null);
}

/** The fork options of a bulk fork (as `POST /v1/runs/{id}/fork`, without an edited input). */
export interface BulkForkOptions {
  fromNodeKey: string;
  failedOnly: boolean;
}

/** A bulk request as it arrives, unchecked (the body's members). */
export interface BulkRequestInput extends BulkMigrateInput {
  action?: unknown;
  filter?: unknown;
  fromNodeKey?: unknown;
  failedOnly?: unknown;
}

export interface BulkRequest {
  action: BulkAction;
  search: RunSearch;
  /** fork only */
  fork: BulkForkOptions | null;
  /** migrate only */
  migrate: BulkMigrateOptions | null;
}

export type BulkRequestCheck = { ok: true; request: BulkRequest } | { ok: false; issues: Issue[] };

const NODE_KEY = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks a bulk request: a known action; a filter that is an object with at least one
 * member (a bulk action never applies to every run by omission), each member valid
 * ({@link checkRunSearch}, issues keyed `filter.<member>`); `fromNodeKey` (and optionally
 * `failedOnly`) for a fork and for a fork only; `toVersion` (and optionally `nodeMap`,
 * `canaryPercent`, `maxErrorRate`) for a migrate and for a migrate only, whose filter must name
 * `definitionId` (a version number means something only within one definition).
 */
export function checkBulkRequest(input: BulkRequestInput, limits: MetadataLimits): BulkRequestCheck {
  const issues: Issue[] = [];
  const action = typeof input.action === 'string' && (BULK_ACTIONS as readonly string[]).includes(input.action) ? (input.action as BulkAction) : null;
  if (action === null) issues.push({ key: 'action', message: `must be one of ${BULK_ACTIONS.join(', ')}` });
  let search: RunSearch = {};
  if (input.filter === null || typeof input.filter !== 'object' || Array.isArray(input.filter)) {
    issues.push({ key: 'filter', message: 'must be an object of run search members' });
  } else {
    const checked = checkRunSearch(input.filter, limits);
    if (!checked.ok) issues.push(...checked.issues.map((i) => ({ key: `filter.${i.key ?? ''}`.replace(/\.$/, ''), message: i.message })));
    else if (isEmptySearch(checked.search)) issues.push({ key: 'filter', message: 'name at least one member: a bulk action never applies to every run by omission' });
    else search = checked.search;
  }
  let fork: BulkForkOptions | null = null;
  if (action === 'fork') {
    if (typeof input.fromNodeKey !== 'string' || !NODE_KEY.test(input.fromNodeKey)) issues.push({ key: 'fromNodeKey', message: 'a fork names the node to fork from' });
    if (input.failedOnly !== undefined && typeof input.failedOnly !== 'boolean') issues.push({ key: 'failedOnly', message: 'must be a boolean' });
    if (issues.length === 0) fork = { fromNodeKey: input.fromNodeKey as string, failedOnly: input.failedOnly === true };
  } else if (action !== null) {
    if (input.fromNodeKey !== undefined) issues.push({ key: 'fromNodeKey', message: `only a fork takes fromNodeKey, not ${action}` });
    if (input.failedOnly !== undefined) issues.push({ key: 'failedOnly', message: `only a fork takes failedOnly, not ${action}` });
  }
  let migrate: BulkMigrateOptions | null = null;
  if (action === 'migrate') {
    const checked = checkBulkMigrate(input);
    if (!checked.ok) issues.push(...checked.issues);
    else migrate = checked.options;
    if (search.definitionId === undefined && !issues.some((i) => i.key?.startsWith('filter'))) {
      issues.push({ key: 'filter.definitionId', message: 'a migrate names the definition whose runs move: toVersion is one of its versions' });
    }
  } else if (action !== null) {
    for (const m of BULK_MIGRATE_MEMBERS) if (input[m] !== undefined) issues.push({ key: m, message: `only a migrate takes ${m}, not ${action}` });
  }
  return issues.length > 0 || action === null ? { ok: false, issues } : { ok: true, request: { action, search, fork, migrate } };
}

/** What processing one run of a job came to: applied, nothing left to do, or refused. */
export type BulkRunOutcome = 'applied' | 'noop' | 'refused';

/**
 * The store's answer to one run's verb, as the outcome function reads it: `applied` the verb
 * wrote (or replayed its own earlier write), `already` the run is already where the verb
 * leads (cancelling, not paused, no longer Failed), `refused` the verb does not act on the
 * run as it is now, `gone` the run no longer exists.
 */
export type BulkVerbAnswer = 'applied' | 'already' | 'refused' | 'gone';

/** The outcome of one run: applied, or noop when the run is already there, else refused. */
export function bulkRunOutcome(answer: BulkVerbAnswer): BulkRunOutcome {
  return answer === 'applied' ? 'applied' : answer === 'already' ? 'noop' : 'refused';
}

/**
 * The retry-failed answer for one run: any Failed node's retry recorded (or an identical one
 * pending) applied; else a run no longer Failed is already reopened; else refused.
 */
export function retryFailedAnswer(r: { exists: boolean; runStatus: RunStatus | null; retried: number }): BulkVerbAnswer {
  if (!r.exists) return 'gone';
  if (r.retried > 0) return 'applied';
  return r.runStatus === 'Failed' ? 'refused' : 'already';
}

/** A job's progress: `done` counts applied and noop runs, `failed` refused ones. */
export interface BulkProgress {
  total: number;
  done: number;
  failed: number;
}

/**
 * The job's status from its progress: Pending before any claim, Running while runs remain
 * (Paused when a migrate's gate stopped it), then Completed — or Failed when there were runs and not one of them was done.
 */
export function bulkJobStatus(p: BulkProgress, claimed: boolean, paused = false): BulkJobStatus {
  if (p.done + p.failed < p.total) return paused ? 'Paused' : claimed ? 'Running' : 'Pending';
  return p.total > 0 && p.done === 0 ? 'Failed' : 'Completed';
}

/**
 * The id one run's verb is applied under in a job: deterministic from the job and the run,
 * so re-applying a batch after a crash replays (a fork's requestId; a cancel's reason names
 * the job the same way).
 */
export function bulkOperationId(bulkId: string, runId: string): string {
  return `bulk:${bulkId}:${runId}`;
}
