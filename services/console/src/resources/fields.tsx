/** Labelled form fields of the resource dialogs (MCP servers, saved agents): a label, the control, and its help line. */
import type { ReactNode } from 'react';

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

/** A list typed one item per line: its items (blank lines dropped). */
export function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}
