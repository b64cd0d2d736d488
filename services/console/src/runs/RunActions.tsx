/**
 * Run-level verbs (the `operate` scope; hidden without it): pause / resume, step one node
 * or one wave while paused, migrate to another version (dry run first), cancel (with an
 * optional reason, after a confirmation).
 * A finished run offers nothing.
 */
import { useId, useState } from 'react';
import type { RunSummary } from '@flowline/client';
import { useCan } from '../session/session';
import { TERMINAL_RUN_STATUSES } from '../ui/status';
import { Dialog, DialogActions } from '../ui/Dialog';
import { RefusalNote } from '../ui/primitives';
import { actDialog, useAct } from './acts';
import { MigrateDialog } from './MigrateDialog';

export function RunActions({ run }: { run: RunSummary }) {
  const canOperate = useCan('operate');
  const [confirming, setConfirming] = useState(false);
  const [migrating, setMigrating] = useState(false);
  const [reason, setReason] = useState('');
  const id = useId();
  const pause = useAct(run.id, (c, operationId, paused: boolean) =>
    paused ? c.runs.pause(run.id, { idempotencyKey: operationId }) : c.runs.resume(run.id, { idempotencyKey: operationId }),
  );
  const step = useAct(run.id, (c, operationId, mode: 'one' | 'wave') => c.runs.step(run.id, { mode }, { idempotencyKey: operationId }));
  const cancel = useAct(run.id, (c, operationId, why: string) => c.runs.cancel(run.id, why.trim() ? { reason: why.trim() } : {}, { idempotencyKey: operationId }));
  const cancelEnds = actDialog(cancel, () => setConfirming(false));
  if (!canOperate || TERMINAL_RUN_STATUSES.has(run.status)) return null;
  const cancelling = run.status === 'Cancelling';
  const error = pause.error ?? step.error;
  return (
    <div className="run-actions">
      <div className="action-row" role="group" aria-label="Run actions">
        {run.paused ? (
          <>
            <button type="button" className="btn btn-sm" disabled={step.pending || cancelling} onClick={() => step.run('one')}>
              Step one
            </button>
            <button type="button" className="btn btn-sm" disabled={step.pending || cancelling} onClick={() => step.run('wave')}>
              Step wave
            </button>
            <button type="button" className="btn btn-sm" disabled={pause.pending} onClick={() => pause.run(false)}>
              Resume
            </button>
          </>
        ) : (
          <button type="button" className="btn btn-sm" disabled={pause.pending || cancelling} onClick={() => pause.run(true)}>
            Pause
          </button>
        )}
        <button type="button" className="btn btn-sm" disabled={cancelling} onClick={() => setMigrating(true)}>
          Migrate…
        </button>
        <button type="button" className="btn btn-sm btn-danger" disabled={cancelling} onClick={() => setConfirming(true)}>
          {cancelling ? 'Cancelling…' : 'Cancel run'}
        </button>
      </div>
      <RefusalNote error={error} title="Refused" />
      {migrating ? <MigrateDialog run={run} onClose={() => setMigrating(false)} /> : null}
      {confirming ? (
        <Dialog title="Cancel this run?" onClose={cancelEnds.close}>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              cancelEnds.submit(reason);
            }}
          >
            <p>Running work is told to stop; the run reads Cancelling until its workers confirm, then Cancelled.</p>
            <label htmlFor={`${id}-reason`}>Reason (optional)</label>
            <input id={`${id}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} style={{ width: '100%' }} />
            <RefusalNote error={cancel.error} title="Refused" />
            <DialogActions back="Keep running" onBack={() => setConfirming(false)} act="Cancel run" tone="btn-reject" disabled={cancel.pending} />
          </form>
        </Dialog>
      ) : null}
    </div>
  );
}
