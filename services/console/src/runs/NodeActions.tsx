/**
 * The operator's verbs on one node (the `operate` scope; hidden without it), offered when
 * the node's state allows them: breakpoint on/off, step this node (paused run), skip
 * (Pending), retry (Failed or a held decision), complete with a payload (not a Pause or a
 * ChatInput), edit the pending input, steer a Queued/Running LLM/Agent, fork a new run from
 * the node. The server has the last word; its refusal is shown under the buttons (a fork's
 * in its dialog).
 */
import { useId, useState } from 'react';
import type { NodeRunDetail, RunControls } from '@flowline/client';
import { useCan } from '../session/session';
import { HUMAN_KINDS, STEERABLE_KINDS } from '../ui/kinds';
import { RefusalNote } from '../ui/primitives';
import { Dialog, DialogActions } from '../ui/Dialog';
import { actDialog, useAct } from './acts';
import { ForkDialog } from './ForkDialog';
import { JsonEditDialog } from './JsonEditDialog';

interface Props {
  runId: string;
  nodeKey: string;
  kind: string;
  status: string;
  pendingDecisionKind: string | null;
  runLive: boolean;
  controls: RunControls | undefined;
  detail: NodeRunDetail | undefined;
  /** a fork from this node started run `runId` (the run view opens it) */
  onForked?(runId: string): void;
}

export function NodeActions({ runId, nodeKey, kind, status, pendingDecisionKind, runLive, controls, detail, onForked }: Props) {
  const canOperate = useCan('operate');
  const [dialog, setDialog] = useState<'complete' | 'input' | 'steer' | 'fork' | null>(null);
  const [message, setMessage] = useState('');
  const id = useId();
  const breakpoints = controls?.breakpoints ?? [];
  const hasBreakpoint = breakpoints.includes(nodeKey);
  const toggleBreakpoint = useAct(runId, (c, operationId, on: boolean) =>
    c.runs.setBreakpoints(runId, on ? [...new Set([...breakpoints, nodeKey])] : breakpoints.filter((k) => k !== nodeKey), { idempotencyKey: operationId }),
  );
  const step = useAct(runId, (c, operationId) => c.runs.step(runId, { mode: 'node', nodeKey }, { idempotencyKey: operationId }));
  const skip = useAct(runId, (c, operationId) => c.runs.skip(runId, nodeKey, { idempotencyKey: operationId }));
  const retry = useAct(runId, (c, operationId) => c.runs.retry(runId, nodeKey, { idempotencyKey: operationId }));
  const complete = useAct(runId, (c, operationId, output: unknown) => c.runs.complete(runId, nodeKey, output, { idempotencyKey: operationId }));
  const setInput = useAct(runId, (c, operationId, input: unknown) => c.runs.setInput(runId, nodeKey, input, { idempotencyKey: operationId }));
  const steer = useAct(runId, (c, operationId, text: string) => c.runs.steer(runId, nodeKey, { operationId, message: text }, { idempotencyKey: operationId }));
  const steerEnds = actDialog(steer, () => setDialog(null));
  if (!canOperate) return null;

  const verbs = [toggleBreakpoint, step, skip, retry];
  const lastError = verbs.find((v) => v.error)?.error;
  const canComplete = !HUMAN_KINDS.has(kind) && ['Pending', 'Queued', 'Running', 'Failed'].includes(status);
  const canRetry = status === 'Failed' || pendingDecisionKind === 'Operator';
  const canSteer = STEERABLE_KINDS.has(kind) && (status === 'Queued' || status === 'Running') && runLive;

  return (
    <section className="node-actions" aria-label="Operator actions">
      <h3>Operate</h3>
      <div className="action-row">
        <button
          type="button"
          className={`btn btn-sm${hasBreakpoint ? ' is-on' : ''}`}
          aria-pressed={hasBreakpoint}
          disabled={toggleBreakpoint.pending || !controls || !runLive}
          onClick={() => toggleBreakpoint.run(!hasBreakpoint)}
        >
          <span className={`bp-dot${hasBreakpoint ? ' on' : ''}`} aria-hidden="true" /> Breakpoint
        </button>
        {controls?.paused && status === 'Pending' ? (
          <button type="button" className="btn btn-sm" disabled={step.pending} onClick={() => step.run()}>
            Step this node
          </button>
        ) : null}
        {(status === 'Pending' || status === 'WaitingForApproval') && runLive ? (
          // declared not taken: the nodes after it proceed (a waiting gate's request is withdrawn)
          <button type="button" className="btn btn-sm" disabled={skip.pending} onClick={() => skip.run()}>
            Skip
          </button>
        ) : null}
        {canRetry ? (
          <button type="button" className="btn btn-sm" disabled={retry.pending} onClick={() => retry.run()}>
            Retry
          </button>
        ) : null}
        {canComplete ? (
          <button type="button" className="btn btn-sm" onClick={() => setDialog('complete')}>
            Complete…
          </button>
        ) : null}
        {status === 'Pending' && runLive ? (
          <button type="button" className="btn btn-sm" onClick={() => setDialog('input')}>
            Edit input…
          </button>
        ) : null}
        {canSteer ? (
          <button type="button" className="btn btn-sm" onClick={() => setDialog('steer')}>
            Steer…
          </button>
        ) : null}
        <button type="button" className="btn btn-sm" onClick={() => setDialog('fork')} title="A new run from this node, reusing what succeeded upstream of it">
          Fork from here…
        </button>
      </div>
      <RefusalNote error={lastError} title="Refused" />
      {dialog === 'complete' ? (
        <JsonEditDialog
          title={`Complete ${nodeKey}`}
          label="Output"
          help="The node succeeds with this output (its envelope's output member); the run goes on from it."
          initial={{}}
          submitLabel="Complete node"
          act={complete}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === 'input' ? (
        <JsonEditDialog
          title={`Edit the input of ${nodeKey}`}
          label="Input"
          help="Replaces the input member of the node's input document; the node runs with it."
          initial={detail?.input?.input ?? {}}
          submitLabel="Save input"
          act={setInput}
          onClose={() => setDialog(null)}
        />
      ) : null}
      {dialog === 'fork' ? <ForkDialog runId={runId} nodeKey={nodeKey} input={detail?.input?.input} onClose={() => setDialog(null)} onForked={(r) => onForked?.(r)} /> : null}
      {dialog === 'steer' ? (
        <Dialog title={`Steer ${nodeKey}`} onClose={steerEnds.close}>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (message.trim()) steerEnds.submit(message);
            }}
          >
            <label htmlFor={`${id}-steer`}>Message</label>
            <textarea id={`${id}-steer`} rows={4} value={message} onChange={(e) => setMessage(e.target.value)} />
            <p className="muted small">The node re-runs its turn with this under “Operator steering”.</p>
            <RefusalNote error={steer.error} title="Refused" />
            <DialogActions back="Cancel" onBack={() => setDialog(null)} act="Send steering" disabled={steer.pending || !message.trim()} />
          </form>
        </Dialog>
      ) : null}
    </section>
  );
}
