/**
 * The editor's dialogs: New (blank, or start from a sample), Open (a saved definition), the
 * conflict, leave and delete prompts, and the keyboard shortcut sheet. (Start is the console's
 * one start dialog, definitions/StartRunDialog.tsx.)
 */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../session/session';
import { Dialog, DialogActions, DialogDone } from '../ui/Dialog';
import { Loading, RefusalNote, Time } from '../ui/primitives';
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
