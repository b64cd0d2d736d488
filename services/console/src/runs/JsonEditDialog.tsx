/** A dialog that takes one JSON document (complete's payload, a pending node's input). */
import { useId } from 'react';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
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
  const field = useJsonText(JSON.stringify(props.initial ?? {}, null, 2));
  const { parsed } = field;
  const id = useId();
  return (
    <Dialog title={props.title} onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (parsed.ok) props.onSubmit(parsed.value);
        }}
      >
        <JsonField id={id} label={props.label} rows={14} field={field} help={props.help} />
        <RefusalNote error={props.error} title="Refused" />
        <DialogActions back="Cancel" onBack={props.onClose} act={props.pending ? 'Sending…' : props.submitLabel} disabled={!parsed.ok || props.pending} />
      </form>
    </Dialog>
  );
}
