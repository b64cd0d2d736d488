/**
 * A map typed as `key: value` lines (run metadata, a migration's node mapping): the parse and
 * the labelled text area that shows, under it, the help or the first line that is not a pair.
 */
export type PairLines = { ok: true; value: Record<string, string> | undefined } | { ok: false; line: number };

/** One `key: value` per line (blank lines ignored; the value may hold colons): the map, or the first line that is not a pair. */
export function parsePairLines(text: string): PairLines {
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

export function PairLinesField(props: {
  id: string;
  label: string;
  text: string;
  onText(text: string): void;
  parsed: PairLines;
  placeholder: string;
  help: string;
  /** how a pair is written, for the error (`key: value`) */
  shape: string;
}) {
  const { id, parsed } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        className="json-input"
        rows={2}
        value={props.text}
        placeholder={props.placeholder}
        aria-invalid={!parsed.ok || undefined}
        aria-describedby={`${id}-help`}
        onChange={(e) => props.onText(e.target.value)}
      />
      {parsed.ok ? (
        <span id={`${id}-help`} className="muted small">
          {props.help}
        </span>
      ) : (
        <span id={`${id}-help`} className="field-error" role="alert">
          Line {parsed.line} is not {props.shape}
        </span>
      )}
    </div>
  );
}
