/**
 * "Act on matching runs…": one operator action on every run the list's filters match
 * (`POST /v1/runs/bulk`). The dialog first asks for the count (a dry run, re-asked when the
 * action changes), then submits under a request id chosen when the dialog opened (a double
 * click or a re-sent request is the same job) and follows the job's progress until it
 * settles. Refusals are shown as answered.
 */
import { useId, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RunSearchFilter } from '@flowline/client';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { RefusalNote } from '../ui/primitives';
import { BULK_ACTIONS, bulkJobSettled, bulkProgressText, type ConsoleBulkAction } from './bulk';

/** How often a submitted job's progress is re-read until it settles. */
export const BULK_POLL_MS = 1_000;

function filterText(filter: RunSearchFilter): string {
  return Object.entries(filter)
    .map(([k, v]) => (k === 'metadata' ? Object.entries(v as Record<string, string>).map(([mk, mv]) => `${mk}:${mv}`).join(', ') : `${k} ${String(v)}`))
    .join(' · ');
}

function Progress({ bulkId }: { bulkId: string }) {
  const client = useClient();
  const qc = useQueryClient();
  const job = useQuery({
    queryKey: ['bulk', bulkId],
    queryFn: async () => {
      const j = await client.runs.bulkProgress(bulkId);
      if (bulkJobSettled(j)) void qc.invalidateQueries({ queryKey: ['runs'] });
      return j;
    },
    refetchInterval: (q) => (q.state.data && bulkJobSettled(q.state.data) ? false : BULK_POLL_MS),
  });
  const j = job.data;
  return (
    <div className="bulk-progress" data-testid="bulk-progress" data-bulk-status={j?.status ?? 'unknown'}>
      <RefusalNote error={job.error} title="Could not read the job" />
      {j ? (
        <>
          <progress max={Math.max(1, j.total)} value={j.done + j.failed} aria-label="Bulk action progress" />
          <p role="status">
            <strong>{j.status}</strong> · {bulkProgressText(j)}
          </p>
        </>
      ) : null}
    </div>
  );
}

export function BulkDialog({ filter, onClose }: { filter: RunSearchFilter; onClose(): void }) {
  const client = useClient();
  const [action, setAction] = useState<ConsoleBulkAction>('cancel');
  const requestId = useMemo(newOperationId, []);
  const id = useId();
  const count = useQuery({
    queryKey: ['bulk-count', action, filter],
    queryFn: () => client.runs.bulk({ action, filter, dryRun: true }),
    staleTime: 0,
    gcTime: 0,
  });
  const submit = useMutation({
    mutationFn: () => client.runs.bulk({ action, filter, requestId }, { idempotencyKey: requestId }),
  });
  const chosen = BULK_ACTIONS.find((a) => a.id === action)!;
  const n = count.data?.count;
  const submitted = submit.data && 'bulkId' in submit.data ? submit.data : null;
  return (
    <Dialog title="Act on matching runs" onClose={onClose}>
      <p className="muted small">Runs matching: {filterText(filter)}</p>
      {submitted ? (
        <>
          <p>
            {chosen.verb} submitted for {submitted.count.toLocaleString('en-US')} runs.
          </p>
          <Progress bulkId={submitted.bulkId} />
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={onClose}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submit.mutate();
          }}
        >
          <fieldset className="bulk-actions">
            <legend>Action</legend>
            {BULK_ACTIONS.map((a) => (
              <label key={a.id} className="radio">
                <input type="radio" name={`${id}-action`} value={a.id} checked={action === a.id} onChange={() => setAction(a.id)} disabled={submit.isPending} />{' '}
                {a.label} <span className="muted small">— {a.applies}</span>
              </label>
            ))}
          </fieldset>
          <p role="status" data-testid="bulk-count">
            {count.isPending ? 'Counting the runs…' : n !== undefined ? `${n.toLocaleString('en-US')} ${n === 1 ? 'run' : 'runs'} would be affected.` : null}
          </p>
          <RefusalNote error={count.error} title="Could not count the runs" />
          <RefusalNote error={submit.error} title="Refused" />
          <DialogActions back="Close" onBack={onClose} act={submit.isPending ? 'Submitting…' : `${chosen.verb} ${n ?? ''} ${n === 1 ? 'run' : 'runs'}`} tone={action === 'cancel' ? 'btn-reject' : 'btn-primary'} disabled={!n || submit.isPending} />
        </form>
      )}
    </Dialog>
  );
}
