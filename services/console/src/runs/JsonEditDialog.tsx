/** A dialog that takes one JSON document (complete's payload, a pending node's input). */
import { useId, useMemo, useState } from 'react';
import { Dialog } from '../ui/Dialog';
import { RefusalNote } from '../ui/primitives';

export function JsonEditDialog(props: {
  title: string;
  label: string;
  help: string;
  initial: unknown;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit(value: unknown): void;
  onClose(): void;
}) {
  const [text, setText] = useState(() => JSON.stringify(props.initial ?? {}, null, 2));
  const id = useId();
  const parsed = useMemo(() => {
    try {
      return { ok: true as const, value: JSON.parse(text) as unknown };
    } catch (err) {
      return { ok: false as const, error: (err as Error).message };
    }
  }, [text]);
  return (
    <Dialog title={props.title} onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (parsed.ok) props.onSubmit(parsed.value);
        }}
      >
        <label htmlFor={id}>{props.label}</label>
        <textarea id={id} className="json-input" rows={14} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} aria-invalid={!parsed.ok || undefined} aria-describedby={`${id}-help`} />
        <p id={`${id}-help`} className={parsed.ok ? 'muted small' : 'field-error'}>
          {parsed.ok ? props.help : `Not JSON: ${parsed.error}`}
        </p>
        <RefusalNote error={props.error} title="Refused" />
        <div className="dialog-actions">
          <button type="button" className="btn btn-ghost" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={!parsed.ok || props.pending}>
            {props.pending ? 'Sending…' : props.submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
