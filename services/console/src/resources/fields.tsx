/**
 * The pieces the resource pages (MCP servers, saved agents) share: labelled text fields with
 * a help line the control names as its description, a row's action buttons, and the
 * confirmation of a delete.
 */
import type { ReactNode } from 'react';
import type { FlowlineClient } from '@flowline/client';
import { actDialog, useKeyedAct } from '../runs/acts';
import { Dialog, DialogActions } from '../ui/Dialog';
import { RefusalNote } from '../ui/primitives';

/** One labelled control with a help line under it (`id-help`), which the control names as its description. */
export function Field({
  id,
  label,
  help,
  children,
}: {
  id: string;
  label: string;
  help?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      {children}
      {help ? (
        <p id={`${id}-help`} className="muted small">
          {help}
        </p>
      ) : null}
    </div>
  );
}

interface TextProps {
  id: string;
  label: string;
  help?: string;
  value: string;
  onChange(value: string): void;
  mono?: boolean;
  required?: boolean;
}

/** A labelled one-line text field; `numeric` asks for a number keyboard. */
export function TextField(p: TextProps & { numeric?: boolean }) {
  return (
    <Field id={p.id} label={p.label} help={p.help}>
      <input
        id={p.id}
        className={p.mono ? 'mono' : undefined}
        value={p.value}
        required={p.required}
        inputMode={p.numeric ? 'numeric' : undefined}
        aria-describedby={p.help ? `${p.id}-help` : undefined}
        onChange={(e) => p.onChange(e.target.value)}
      />
    </Field>
  );
}

/** A labelled multi-line text field. */
export function TextAreaField(p: TextProps & { rows: number }) {
  return (
    <Field id={p.id} label={p.label} help={p.help}>
      <textarea
        id={p.id}
        className={p.mono ? 'mono' : undefined}
        rows={p.rows}
        value={p.value}
        required={p.required}
        aria-describedby={p.help ? `${p.id}-help` : undefined}
        onChange={(e) => p.onChange(e.target.value)}
      />
    </Field>
  );
}

/** A list typed one item per line: its items (blank lines dropped). */
export function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** One button of a row's actions: `label` shows, `label name` is what it says to assistive technology. */
export interface RowAction {
  label: string;
  onClick(): void;
  /** shown only with the `define` scope */
  defines?: boolean;
  /** outlined (the row's main action) rather than ghost */
  main?: boolean;
  /** what it says to assistive technology @default `label name` */
  ariaLabel?: string;
}

/** A row's action buttons, each named with the row's `name` ("Edit researcher"). */
export function RowActions({
  name,
  actions,
  canDefine,
}: {
  name: string;
  actions: RowAction[];
  canDefine: boolean;
}) {
  return (
    <td className="actions">
      {actions
        .filter((a) => canDefine || !a.defines)
        .map((a) => (
          <button
            key={a.label}
            type="button"
            className={`btn btn-sm${a.main ? '' : ' btn-ghost'}`}
            onClick={a.onClick}
            aria-label={a.ariaLabel ?? `${a.label} ${name}`}
          >
            {a.label}
          </button>
        ))}
    </td>
  );
}

/** "Delete NAME?": deletes through `remove` and re-reads the list under `queryKey`; a refusal stays shown. */
export function DeleteDialog(p: {
  name: string;
  queryKey: readonly unknown[];
  remove(client: FlowlineClient): Promise<unknown>;
  children: ReactNode;
  onClose(): void;
}) {
  const remove = useKeyedAct(p.queryKey, (c) => p.remove(c));
  const ends = actDialog(remove, p.onClose);
  return (
    <Dialog title={`Delete ${p.name}?`} onClose={ends.close}>
      <p>{p.children}</p>
      <RefusalNote error={remove.error} title="Refused" />
      <DialogActions
        back="Keep it"
        onBack={ends.close}
        act="Delete"
        tone="btn-danger"
        onAct={() => ends.submit()}
        disabled={remove.pending}
      />
    </Dialog>
  );
}
