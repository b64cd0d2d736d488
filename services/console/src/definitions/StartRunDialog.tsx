/**
 * "Start run": the run input as JSON, prefilled from the Start node's `defaultInput`; the
 * start carries a `requestId` chosen when the dialog opened (a double click or a re-sent
 * request is the same start). A refusal (invalid input, schema, size) is shown as answered.
 */
import { useId, useMemo } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import type { DefinitionSummary } from '@flowline/client';
import { useDefinition } from '../api/queries';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { Loading, RefusalNote } from '../ui/primitives';
import { defaultInputOf } from './graph-doc';

function InputForm({ definition, initial, onClose }: { definition: DefinitionSummary; initial: string; onClose(): void }) {
  const client = useClient();
  const navigate = useNavigate();
  const field = useJsonText(initial, true);
  const { parsed } = field;
  const requestId = useMemo(newOperationId, []);
  const id = useId();
  const start = useMutation({
    mutationFn: (input: unknown) =>
      client.runs.start(definition.id, { requestId, ...(input !== undefined ? { input } : {}) }, { idempotencyKey: requestId }),
    onSuccess: ({ runId }) => void navigate({ to: '/run', search: { runId } }),
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (parsed.ok) start.mutate(parsed.value);
      }}
    >
      <JsonField id={id} label="Run input (JSON)" rows={10} field={field} help="Empty means no input. Prefilled from the Start node’s defaultInput." />
      <RefusalNote error={start.error} title="The run was not started" />
      <div className="dialog-actions">
        <button type="button" className="btn btn-ghost" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary" disabled={!parsed.ok || start.isPending || start.isSuccess}>
          {start.isPending ? 'Starting…' : 'Start run'}
        </button>
      </div>
    </form>
  );
}

export function StartRunDialog({ definition, onClose }: { definition: DefinitionSummary; onClose(): void }) {
  const full = useDefinition(definition.id);
  const initial = useMemo(() => {
    if (!full.data) return '';
    const v = defaultInputOf(full.data.graph);
    return v === undefined ? '' : JSON.stringify(v, null, 2);
  }, [full.data]);
  return (
    <Dialog title={`Start “${definition.name}”`} onClose={onClose}>
      {full.isPending ? <Loading label="Reading the definition" /> : null}
      <RefusalNote error={full.error} />
      {full.data ? <InputForm definition={definition} initial={initial} onClose={onClose} /> : null}
    </Dialog>
  );
}
