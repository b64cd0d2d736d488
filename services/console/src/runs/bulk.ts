/**
 * The runs list's bulk actions (`POST /v1/runs/bulk`): the list's filters as the action's
 * filter, the actions the console offers, and what a job's progress reads as.
 */
import type { BulkJob, RunSearchFilter } from '@flowline/client';
import { parseMetadataPair, type RunsSearch } from '../app/search';

export type ConsoleBulkAction = 'cancel' | 'retry-failed' | 'resume' | 'migrate';

export const BULK_ACTIONS: ReadonlyArray<{ id: ConsoleBulkAction; label: string; verb: string; applies: string }> = [
  { id: 'cancel', label: 'Cancel', verb: 'Cancel', applies: 'the live runs among them are cancelled' },
  { id: 'retry-failed', label: 'Retry failed', verb: 'Retry', applies: 'each Failed run retries its failed nodes' },
  { id: 'resume', label: 'Resume', verb: 'Resume', applies: 'the paused live runs among them resume' },
  { id: 'migrate', label: 'Migrate', verb: 'Migrate', applies: 'the live runs move to another version' },
];

/** A migrate's own members, as the dialog's fields hold them (blank: not sent). */
export interface MigrateFields {
  toVersion: string;
  canaryPercent: string;
  maxErrorRate: string;
}

/**
 * The migrate members of the body, or the field the user must fix. `maxErrorRate` is typed as a
 * percent (5 → 0.05), as the progress shows it.
 */
export function migrateMembers(f: MigrateFields): { ok: true; body: { toVersion: number; canaryPercent?: number; maxErrorRate?: number } } | { ok: false; message: string } {
  const toVersion = Number(f.toVersion);
  if (!Number.isInteger(toVersion) || toVersion < 1) return { ok: false, message: 'Target version: a version number' };
  const canary = f.canaryPercent.trim() === '' ? undefined : Number(f.canaryPercent);
  if (canary !== undefined && !(canary > 0 && canary < 100)) return { ok: false, message: 'Canary: a percent more than 0 and under 100' };
  const rate = f.maxErrorRate.trim() === '' ? undefined : Number(f.maxErrorRate);
  if (rate !== undefined && !(rate >= 0 && rate < 100)) return { ok: false, message: 'Max error rate: a percent from 0 up to 100' };
  return { ok: true, body: { toVersion, ...(canary !== undefined ? { canaryPercent: canary } : {}), ...(rate !== undefined ? { maxErrorRate: rate / 100 } : {}) } };
}

/** "2 migrated · 1 refused · 7 remaining" */
export function migrateProgressText(job: Pick<BulkJob, 'total' | 'done' | 'failed'>): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${n(job.done)} migrated · ${n(job.failed)} refused · ${n(Math.max(0, job.total - job.done - job.failed))} remaining`;
}

/** Why a paused job waits, for a person. */
export function pauseReasonText(reason: BulkJob['pauseReason']): string | null {
  if (reason === 'canary') return 'Paused after the canary: check the migrated runs, then resume.';
  if (reason === 'errorRate') return 'Paused: too many migrations were refused (over the max error rate).';
  return null;
}

/**
 * The runs list's filters as a bulk action's filter, or null when nothing filters the
 * list (the API refuses an empty filter: an action on every run is never one click away).
 */
export function bulkFilterOf(search: RunsSearch): RunSearchFilter | null {
  const metadata: Record<string, string> = {};
  for (const text of search.metadata ?? []) {
    const pair = parseMetadataPair(text);
    if (pair) metadata[pair.key] = pair.value;
  }
  const filter: RunSearchFilter = {
    ...(search.status ? { status: search.status as RunSearchFilter['status'] } : {}),
    ...(search.definitionId ? { definitionId: search.definitionId } : {}),
    ...(search.conversationId ? { conversationId: search.conversationId } : {}),
    ...(search.failureClass ? { failureClass: search.failureClass as RunSearchFilter['failureClass'] } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    // the server answers the search text for the list and the action alike
    ...(search.q ? { q: search.q } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : null;
}

/** True once a job will change no more. */
export function bulkJobSettled(job: Pick<BulkJob, 'status'>): boolean {
  return job.status === 'Completed' || job.status === 'Failed';
}

/** "412 of 1,000 done · 3 refused" */
export function bulkProgressText(job: Pick<BulkJob, 'total' | 'done' | 'failed'>): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const handled = job.done + job.failed;
  return `${n(handled)} of ${n(job.total)} handled${job.failed > 0 ? ` · ${n(job.failed)} refused` : ''}`;
}
