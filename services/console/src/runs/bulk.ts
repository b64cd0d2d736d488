/**
 * The runs list's bulk actions (`POST /v1/runs/bulk`): the list's filters as the action's
 * filter, the actions the console offers, and what a job's progress reads as.
 */
import type { BulkJob, RunSearchFilter } from '@flowline/client';
import { parseMetadataPair, type RunsSearch } from '../app/search';

export type ConsoleBulkAction = 'cancel' | 'retry-failed' | 'resume';

export const BULK_ACTIONS: ReadonlyArray<{ id: ConsoleBulkAction; label: string; verb: string; applies: string }> = [
  { id: 'cancel', label: 'Cancel', verb: 'Cancel', applies: 'the live runs among them are cancelled' },
  { id: 'retry-failed', label: 'Retry failed', verb: 'Retry', applies: 'each Failed run retries its failed nodes' },
  { id: 'resume', label: 'Resume', verb: 'Resume', applies: 'the paused live runs among them resume' },
];

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
