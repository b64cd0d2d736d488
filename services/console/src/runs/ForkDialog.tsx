/**
 * Fork from a node (`POST /v1/runs/{id}/fork`): a NEW run that reuses what succeeded
 * upstream of the node and runs the node and everything after it again — optionally with an
 * edited input for the node, or keeping the node's descendants that succeeded (`failedOnly`).
 * The fork goes out under its own `Idempotency-Key`; a refusal stays in the dialog; on
 * success `onForked` gets the new run (the run view opens it).
 */
import { useId, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { ForkRunBody } from '@flowline/client';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { RefusalNote } from '../ui/primitives';

export function ForkDialog(props: { runId: string; nodeKey: string; input: unknown; onClose(): void; onForked(runId: string): void }) {
  const { runId, nodeKey, input, onClose, onForked } = props;
  const client = useClient();
  const id = useId();
  const [editInput, setEditInput] = useState(false);
  const [failedOnly, setFailedOnly] = useState(false);
  const field = useJsonText(JSON.stringify(input ?? {}, null, 2));
  const { parsed } = field;
  // one id per dialog: a retried submit of the same fork is the same act
  const [operationId] = useState(newOperationId);
  const fork = useMutation({
    mutationFn: (body: ForkRunBody) => client.runs.fork(runId, body, { idempotencyKey: operationId }),
    onSuccess: (r) => {
      onClose();
      onForked(r.runId);
    },
  });
  const canSubmit = !fork.isPending && (!editInput || parsed.ok);
  return (
    <Dialog title={`Fork from ${nodeKey}`} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!canSubmit) return;
          fork.mutate({ fromNodeKey: nodeKey, ...(editInput && parsed.ok ? { input: parsed.value } : {}), ...(failedOnly ? { failedOnly: true } : {}) });
        }}
      >
        <p className="muted small">
          A new run of the same definition version: what succeeded upstream of <span className="mono">{nodeKey}</span> is reused as it is, and{' '}
          <span className="mono">{nodeKey}</span> and everything after it run again.
        </p>
        <label className="option-check">
          <input type="checkbox" checked={editInput} disabled={failedOnly} onChange={(e) => setEditInput(e.target.checked)} /> Run the node with an edited input
        </label>
        {editInput ? (
          <JsonField id={`${id}-input`} label="Input" rows={10} field={field} help="Replaces the input member of the node’s input document (for the Start node: the run input)." />
        ) : null}
        <label className="option-check">
          <input type="checkbox" checked={failedOnly} disabled={editInput} onChange={(e) => setFailedOnly(e.target.checked)} /> Only what failed: keep the branches and
          iterations after the node that succeeded
        </label>
        <RefusalNote error={fork.error} title="Refused" />
        <DialogActions back="Cancel" onBack={onClose} act="Fork run" disabled={!canSubmit} />
      </form>
    </Dialog>
  );
}
