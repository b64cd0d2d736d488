/**
 * A JSON editor (CodeMirror 6) for JSON-shaped members: the text is exactly what the save
 * parses — a string value shows quoted, and text that is not JSON changes nothing (the error
 * is shown under the editor). An empty text means "absent" where the member may be absent.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, placeholder as cmPlaceholder } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from '@codemirror/language';

/** The text a value is edited as (empty for absent). */
export function jsonText(value: unknown, indent = 2): string {
  return value === undefined ? '' : JSON.stringify(value, null, indent);
}

/** Parses editor text: undefined for empty, the value, or the JSON error. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

export interface JsonEditorProps {
  label: string;
  value: unknown;
  /** called with each parsed value (undefined = empty) */
  onChange(value: unknown): void;
  help?: string;
  placeholder?: string;
  minLines?: number;
  /** an id for the label's `for` */
  id?: string;
  testId?: string;
}

export function JsonEditor({ label, value, onChange, help, placeholder, minLines = 3, id, testId }: JsonEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const [error, setError] = useState<string | null>(null);
  const autoId = useId();
  const labelId = `${id ?? autoId}-label`;
  const helpId = `${id ?? autoId}-help`;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: jsonText(value),
        extensions: [
          lineNumbers(),
          history(),
          bracketMatching(),
          json(),
          syntaxHighlighting(defaultHighlightStyle),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-labelledby': labelId, 'aria-describedby': helpId, 'aria-multiline': 'true', role: 'textbox' }),
          ...(placeholder ? [cmPlaceholder(placeholder)] : []),
          EditorView.theme({ '.cm-content': { minHeight: `${minLines * 1.45}em` } }),
          EditorView.updateListener.of((u) => {
            if (!u.docChanged) return;
            const parsed = parseJsonText(u.state.doc.toString());
            if (parsed.ok) {
              setError(null);
              onChangeRef.current(parsed.value);
            } else setError(parsed.error);
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // created once: outside changes of the value arrive through the effect below
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the initial value and ids seed the editor once
  }, []);

  // an outside change of the value (another panel, the JSON view, a reload) replaces the text
  // unless the text already reads as that value
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const current = parseJsonText(v.state.doc.toString());
    if (current.ok && JSON.stringify(current.value) === JSON.stringify(value)) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: jsonText(value) } });
  }, [value]);

  return (
    <div className="field json-field" data-testid={testId}>
      <span className="field-label" id={labelId}>
        {label}
      </span>
      <div ref={host} className={`cm-host${error ? ' is-invalid' : ''}`} />
      <p id={helpId} className={error ? 'field-error' : 'field-help'}>
        {error ? `Not JSON (nothing changed): ${error}` : help}
      </p>
    </div>
  );
}
