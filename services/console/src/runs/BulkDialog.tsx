/**
 * "Act on matching runs…": one operator action on every run the list's filters match
 * (`POST /v1/runs/bulk`). The dialog first asks for the count (a dry run, re-asked when the
 * action changes), then submits under a request id chosen when the dialog opened (a double
 * click or a re-sent request is the same job) and follows the job's progress until it
 * settles. Refusals are shown as answered. A migrate also asks for the target version, a canary
 * share and a max error rate, and its progress reads as migrated / refused / remaining, with the
 * reason of a pause, a Resume button and the refused runs with their reasons.
 */
import { useId, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RunSearchFilter } from '@flowline/client';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { RefusalNote } from '../ui/primitives';
import { BULK_ACTIONS, bulkJobSettled, bulkProgressText, migrateMembers, migrateProgressText, pauseReasonText, type ConsoleBulkAction, type MigrateFields } from './bulk';

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
  const resume = useMutation({
    mutationFn: () => client.runs.bulkResume(bulkId),
    onSuccess: (next) => qc.setQueryData(['bulk', bulkId], next),
  });
  const isMigrate = j?.action === 'migrate';
  const paused = j?.status === 'Paused' ? pauseReasonText(j.pauseReason) : null;
  return (
    <div className="bulk-progress" data-testid="bulk-progress" data-bulk-status={j?.status ?? 'unknown'}>
      <RefusalNote error={job.error} title="Could not read the job" />
      {j ? (
        <>
          <progress max={Math.max(1, j.total)} value={j.done + j.failed} aria-label="Bulk action progress" />
          <p role="status">
            <strong>{j.status}</strong> · {isMigrate ? migrateProgressText(j) : bulkProgressText(j)}
          </p>
          {paused ? (
            <p className="bulk-paused" data-testid="bulk-paused">
              {paused}{' '}
              <button type="button" className="btn btn-primary" onClick={() => resume.mutate()} disabled={resume.isPending}>
                {resume.isPending ? 'Resuming…' : 'Resume'}
              </button>
            </p>
          ) : null}
          <RefusalNote error={resume.error} title="Could not resume" />
          {isMigrate && j.failed > 0 ? <RefusedRuns bulkId={bulkId} failed={j.failed} /> : null}
        </>
      ) : null}
    </div>
  );
}

/** The runs a migrate refused, each with its reason (the first page). */
function RefusedRuns({ bulkId, failed }: { bulkId: string; failed: number }) {
  const client = useClient();
  const page = useQuery({ queryKey: ['bulk-refused', bulkId, failed], queryFn: () => client.runs.bulkRuns(bulkId, { outcome: 'refused', limit: 50 }) });
  return (
    <div data-testid="bulk-refused">
      <RefusalNote error={page.error} title="Could not list the refused runs" />
      {page.data ? (
        <ul className="bulk-refused">
          {page.data.items.map((r) => (
            <li key={r.runId}>
              <code>{r.runId.slice(0, 8)}</code> <strong>{r.reason ?? 'refused'}</strong>
              {r.details && r.details.length > 0 ? <span className="muted small"> — {r.details.map((d) => d.message).join('; ')}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function BulkDialog({ filter, onClose }: { filter: RunSearchFilter; onClose(): void }) {
  const client = useClient();
  const [action, setAction] = useState<ConsoleBulkAction>('cancel');
  const [fields, setFields] = useState<MigrateFields>({ toVersion: '', canaryPercent: '', maxErrorRate: '' });
  const requestId = useMemo(newOperationId, []);
  const id = useId();
  const migrate = action === 'migrate' ? migrateMembers(fields) : null;
  const members = migrate?.ok ? migrate.body : {};
  const count = useQuery({
    queryKey: ['bulk-count', action, filter, members],
    queryFn: () => client.runs.bulk({ action, filter, dryRun: true, ...members }),
    enabled: migrate === null || migrate.ok,
    staleTime: 0,
    gcTime: 0,
  });
  const submit = useMutation({
    mutationFn: () => client.runs.bulk({ action, filter, requestId, ...members }, { idempotencyKey: requestId }),
  });
  const field = (name: keyof MigrateFields, label: string, hint: string) => (
    <label className="field">
      {label}
      <input inputMode="decimal" name={name} value={fields[name]} onChange={(e) => setFields({ ...fields, [name]: e.target.value })} disabled={submit.isPending} />
      <span className="muted small">{hint}</span>
    </label>
  );
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
          {action === 'migrate' ? (
            <fieldset className="bulk-migrate">
              <legend>Migrate</legend>
              {field('toVersion', 'Target version', "the definition's latest version")}
              {field('canaryPercent', 'Canary %', 'optional: migrate this share first, then pause')}
              {field('maxErrorRate', 'Max error rate %', 'optional: pause when more refuse')}
              {migrate && !migrate.ok ? <p className="muted small">{migrate.message}</p> : null}
            </fieldset>
          ) : null}
          <p role="status" data-testid="bulk-count">
            {migrate && !migrate.ok ? null : count.isPending ? 'Counting the runs…' : n !== undefined ? `${n.toLocaleString('en-US')} ${n === 1 ? 'run' : 'runs'} would be affected.` : null}
          </p>
          <RefusalNote error={count.error} title="Could not count the runs" />
          <RefusalNote error={submit.error} title="Refused" />
          <DialogActions back="Close" onBack={onClose} act={submit.isPending ? 'Submitting…' : `${chosen.verb} ${n ?? ''} ${n === 1 ? 'run' : 'runs'}`} tone={action === 'cancel' ? 'btn-reject' : 'btn-primary'} disabled={!n || submit.isPending} />
        </form>
      )}
    </Dialog>
  );
}
