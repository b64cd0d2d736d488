/** A JSON document typed into a textarea: its text, what it parses to, and the field that shows both. */
import { useMemo, useState } from 'react';

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

/** `text` parsed; with `emptyIsNothing`, blank text is a valid "no document" (`undefined`). */
export function parseJsonText(text: string, emptyIsNothing = false): JsonParse {
  if (emptyIsNothing && text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** The text of a JSON field (starting at `initial`) and its parse. */
export function useJsonText(initial: string, emptyIsNothing = false) {
  const [text, setText] = useState(initial);
  const parsed = useMemo(() => parseJsonText(text, emptyIsNothing), [text, emptyIsNothing]);
  return { text, setText, parsed };
}

/** The labelled textarea and, under it, `help` or why the text is not JSON. */
export function JsonField(props: { id: string; label: string; help: string; rows: number; field: ReturnType<typeof useJsonText> }) {
  const { id, field } = props;
  return (
    <>
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        className="json-input"
        rows={props.rows}
        spellCheck={false}
        value={field.text}
        onChange={(e) => field.setText(e.target.value)}
        aria-invalid={!field.parsed.ok || undefined}
        aria-describedby={`${id}-help`}
      />
      <p id={`${id}-help`} className={field.parsed.ok ? 'muted small' : 'field-error'}>
        {field.parsed.ok ? props.help : `Not JSON: ${field.parsed.error}`}
      </p>
    </>
  );
}
