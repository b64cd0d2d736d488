/**
 * "Start run": the run input as JSON, prefilled from the Start node's `defaultInput`; the
 * start carries a `requestId` chosen when the dialog opened (a double click or a re-sent
 * request is the same start). A refusal (invalid input, schema, size) is shown as answered.
 */
import { useId, useMemo, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import type { DefinitionSummary } from '@flowline/client';
import { useDefinition } from '../api/queries';
import { newOperationId } from '../api/operation';
import { useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { Loading, RefusalNote } from '../ui/primitives';
import { defaultInputOf } from './graph-doc';
import { DEFAULT_PRIORITY } from '../runs/RunFacts';

/**
 * Run metadata as the dialog takes it: one `key: value` per line (blank lines ignored).
 * Answers the map, or the first line that is not a pair.
 */
export function parseMetadataLines(text: string): { ok: true; value: Record<string, string> | undefined } | { ok: false; line: number } {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const at = line.indexOf(':');
    const key = at > 0 ? line.slice(0, at).trim() : '';
    const value = at > 0 ? line.slice(at + 1).trim() : '';
    if (!key || !value) return { ok: false, line: i + 1 };
    out[key] = value;
  }
  return { ok: true, value: Object.keys(out).length > 0 ? out : undefined };
}

function InputForm({ definition, initial, onClose }: { definition: DefinitionSummary; initial: string; onClose(): void }) {
  const client = useClient();
  const navigate = useNavigate();
  const field = useJsonText(initial, true);
  const { parsed } = field;
  const requestId = useMemo(newOperationId, []);
  const id = useId();
  const [metaText, setMetaText] = useState('');
  const [priority, setPriority] = useState(DEFAULT_PRIORITY);
  const meta = parseMetadataLines(metaText);
  const start = useMutation({
    mutationFn: ({ input, metadata }: { input: unknown; metadata: Record<string, string> | undefined }) =>
      client.runs.start(
        definition.id,
        {
          requestId,
          ...(input !== undefined ? { input } : {}),
          ...(metadata ? { metadata } : {}),
          ...(priority !== DEFAULT_PRIORITY ? { priority } : {}),
        },
        { idempotencyKey: requestId },
      ),
    onSuccess: ({ runId }) => void navigate({ to: '/run', search: { runId } }),
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (parsed.ok && meta.ok) start.mutate({ input: parsed.value, metadata: meta.value });
      }}
    >
      <JsonField id={id} label="Run input (JSON)" rows={10} field={field} help="Empty means no input. Prefilled from the Start node’s defaultInput." />
      <div className="field">
        <label htmlFor={`${id}-meta`}>Metadata (optional)</label>
        <textarea
          id={`${id}-meta`}
          className="json-input"
          rows={2}
          value={metaText}
          placeholder={'customer: acme\nbatch: nightly-42'}
          aria-invalid={!meta.ok || undefined}
          aria-describedby={`${id}-meta-help`}
          onChange={(e) => setMetaText(e.target.value)}
        />
        {meta.ok ? (
          <span id={`${id}-meta-help`} className="muted small">
            One key: value per line. Searchable in the runs list; stored unencrypted.
          </span>
        ) : (
          <span id={`${id}-meta-help`} className="field-error" role="alert">
            Line {meta.line} is not key: value
          </span>
        )}
      </div>
      <div className="field">
        <label htmlFor={`${id}-priority`}>Priority</label>
        <select id={`${id}-priority`} value={priority} onChange={(e) => setPriority(Number(e.target.value))} aria-describedby={`${id}-priority-help`}>
          {[5, 4, 3, 2, 1].map((p) => (
            <option key={p} value={p}>
              {p}
              {p === 5 ? ' (most urgent)' : p === 1 ? ' (least urgent)' : p === DEFAULT_PRIORITY ? ' (default)' : ''}
            </option>
          ))}
        </select>
        <span id={`${id}-priority-help`} className="muted small">
          Higher runs first among this tenant’s waiting work.
        </span>
      </div>
      <RefusalNote error={start.error} title="The run was not started" />
      <DialogActions back="Cancel" onBack={onClose} act={start.isPending ? 'Starting…' : 'Start run'} disabled={!parsed.ok || !meta.ok || start.isPending || start.isSuccess} />
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
