/** A dialog that takes one JSON document (complete's payload, a pending node's input). */
import { useId } from 'react';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { RefusalNote } from '../ui/primitives';
import { actDialog, type Act } from './acts';

export function JsonEditDialog(props: {
  title: string;
  label: string;
  help: string;
  initial: unknown;
  submitLabel: string;
  /** the act the document is sent to; the dialog closes once it succeeds */
  act: Act<unknown>;
  onClose(): void;
}) {
  const field = useJsonText(JSON.stringify(props.initial ?? {}, null, 2));
  const { parsed } = field;
  const id = useId();
  const { act } = props;
  const ends = actDialog(act, props.onClose);
  return (
    <Dialog title={props.title} onClose={ends.close} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (parsed.ok) ends.submit(parsed.value);
        }}
      >
        <JsonField id={id} label={props.label} rows={14} field={field} help={props.help} />
        <RefusalNote error={act.error} title="Refused" />
        <DialogActions back="Cancel" onBack={ends.close} act={act.pending ? 'Sending…' : props.submitLabel} disabled={!parsed.ok || act.pending} />
      </form>
    </Dialog>
  );
}
