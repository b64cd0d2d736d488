/**
 * The editor's dialogs: New (blank, or start from a sample), Open (a saved definition),
 * Start (the run input, prefilled from the Start's `defaultInput` and checked against the
 * Start's and the graph's `inputSchema` before it is sent), and the conflict and leave
 * prompts.
 */
import { useMemo, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Validator } from '@cfworker/json-schema';
import { useClient } from '../session/session';
import { newOperationId } from '../api/operation';
import { Dialog, DialogActions, DialogDone } from '../ui/Dialog';
import { Loading, RefusalNote, Time } from '../ui/primitives';
import { JsonEditor } from './inspector/JsonEditor';
import { SAMPLES, type Sample } from './samples';
import { SHORTCUTS } from './model/shortcuts';

export function NewDialog({ onBlank, onSample, onClose }: { onBlank(): void; onSample(s: Sample): void; onClose(): void }) {
  return (
    <Dialog title="New workflow" onClose={onClose} wide>
      <p className="muted">Start from a blank Start → End, or from a sample: it becomes a new, unsaved definition.</p>
      <ul className="sample-list">
        <li>
          <button type="button" className="sample-card" onClick={onBlank} data-sample="blank">
            <strong>Blank</strong>
            <span className="muted small">Start → End</span>
          </button>
        </li>
        {SAMPLES.map((s) => (
          <li key={s.id}>
            <button type="button" className="sample-card" onClick={() => onSample(s)} data-sample={s.id}>
              <strong>{s.name}</strong>
              <span className="muted small">{s.description}</span>
            </button>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

export function OpenDialog({ onOpen, onClose }: { onOpen(id: string): void; onClose(): void }) {
  const client = useClient();
  const list = useQuery({ queryKey: ['definitions', 'editor-open'], queryFn: () => client.definitions.list({ limit: 200 }) });
  const [filter, setFilter] = useState('');
  const items = (list.data?.items ?? []).filter((d) => d.name.toLowerCase().includes(filter.toLowerCase()));
  return (
    <Dialog title="Open a definition" onClose={onClose} wide>
      <label htmlFor="open-filter">Filter by name</label>
      <input id="open-filter" value={filter} onChange={(e) => setFilter(e.target.value)} autoFocus />
      {list.isPending ? <Loading label="Reading definitions" /> : null}
      <RefusalNote error={list.error} />
      <ul className="open-list">
        {items.map((d) => (
          <li key={d.id}>
            <button type="button" className="open-item" onClick={() => onOpen(d.id)} data-definition-id={d.id}>
              <span className="cell-title">{d.name}</span>
              <span className="muted small">
                {d.kind} · v{d.version} · {d.nodeCount} nodes · <Time iso={d.updatedAt} />
              </span>
            </button>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

/** Schema errors of `input` against each schema (cfworker's validator: no code generation, so it runs under the console's CSP). */
export function inputProblems(input: unknown, schemas: Array<[string, unknown]>): string[] {
  const out: string[] = [];
  for (const [where, schema] of schemas) {
    if (!schema || typeof schema !== 'object') continue;
    try {
      const r = new Validator(schema as object, '2020-12', false).validate(input === undefined ? {} : input);
      for (const e of r.errors.filter((x) => x.keyword !== 'properties' && x.keyword !== 'allOf')) out.push(`${where}: ${e.instanceLocation} ${e.error}`);
    } catch (err) {
      out.push(`${where}: ${(err as Error).message}`);
    }
  }
  return out;
}

export function StartDialog({
  definitionId,
  name,
  defaultInput,
  schemas,
  onStarted,
  onClose,
}: {
  definitionId: string;
  name: string;
  defaultInput: unknown;
  schemas: Array<[string, unknown]>;
  onStarted(runId: string): void;
  onClose(): void;
}) {
  const client = useClient();
  const [input, setInput] = useState<unknown>(defaultInput);
  const requestId = useMemo(newOperationId, []);
  const problems = useMemo(() => inputProblems(input, schemas), [input, schemas]);
  const start = useMutation({
    mutationFn: () => client.runs.start(definitionId, { requestId, ...(input !== undefined ? { input } : {}) }, { idempotencyKey: requestId }),
    onSuccess: ({ runId }) => onStarted(runId),
  });
  return (
    <Dialog title={`Start “${name}”`} onClose={onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (problems.length === 0) start.mutate();
        }}
      >
        <JsonEditor
          label="Run input (JSON)"
          value={input}
          onChange={setInput}
          help="Prefilled from the Start node's defaultInput; empty means none (the defaultInput, else {})."
          minLines={6}
          testId="run-input"
        />
        {problems.length > 0 ? (
          <ul className="field-error input-problems" aria-label="Input problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        <RefusalNote error={start.error} title="The run was not started" />
        <DialogActions back="Cancel" onBack={onClose} act={start.isPending ? 'Starting…' : 'Start run'} disabled={problems.length > 0 || start.isPending || start.isSuccess} />
      </form>
    </Dialog>
  );
}

export function ConflictDialog({ onReload, onClose }: { onReload(): void; onClose(): void }) {
  return (
    <Dialog title="This definition changed elsewhere" onClose={onClose}>
      <p>
        Someone saved a newer version (in another tab or by another person) since you opened it. Reload it to see their version; your unsaved
        changes here are then dropped.
      </p>
      <DialogActions back="Keep editing" onBack={onClose} act="Reload the saved version" onAct={onReload} />
    </Dialog>
  );
}

export function LeaveDialog({ onStay, onLeave }: { onStay(): void; onLeave(): void }) {
  return (
    <Dialog title="Leave without saving?" onClose={onStay}>
      <p>This workflow has changes that are not saved. Leaving drops them.</p>
      <DialogActions back="Stay" onBack={onStay} act="Leave and drop changes" onAct={onLeave} tone="btn-danger" />
    </Dialog>
  );
}

export function DeleteDialog({ name, onStay, onDelete }: { name: string; onStay(): void; onDelete(): void }) {
  return (
    <Dialog title={`Delete “${name}”?`} onClose={onStay}>
      <p>The definition is deleted for good. A definition a live run still uses cannot be deleted.</p>
      <DialogActions back="Keep it" onBack={onStay} act="Delete" onAct={onDelete} tone="btn-danger" />
    </Dialog>
  );
}

/** The keyboard shortcut sheet (`?`). */
export function ShortcutSheet({ onClose }: { onClose(): void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table className="table shortcut-table" aria-label="Editor shortcuts">
        <thead>
          <tr>
            <th scope="col">Keys</th>
            <th scope="col">Does</th>
          </tr>
        </thead>
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.keys}>
              <td>
                <kbd>{s.keys}</kbd>
              </td>
              <td>{s.does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">While typing in a field, the field keeps its own keys (its own undo too); Ctrl+S and Escape still work.</p>
      <DialogDone onClose={onClose} />
    </Dialog>
  );
}
