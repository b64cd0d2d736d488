/**
 * A JSON editor (CodeMirror 6) for JSON-shaped members: the text is exactly what the save
 * parses — a string value shows quoted, and text that is not JSON changes nothing (the error
 * is shown under the editor). An empty text means "absent" where the member may be absent.
 * With `text`, the value is the text itself (a template prompt); with `hints`, the words a
 * template may name are offered inside `{{ … }}` as it is typed.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, placeholder as cmPlaceholder } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from '@codemirror/language';
import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { templateCompletions, type TemplateHints } from '../model/template-hints';

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

/** Parses the text of a `text` editor: the text itself, undefined for empty. */
function parseText(text: string): { ok: true; value: unknown } {
  return { ok: true, value: text === '' ? undefined : text };
}

const textOf = (value: unknown): string => (typeof value === 'string' ? value : jsonText(value));

/** The completion source of a template field: `hints` read through a ref, so the editor sees the document as it is now. */
function templateSource(hints: { current: TemplateHints | undefined }) {
  return (ctx: CompletionContext): CompletionResult | null => {
    if (!hints.current) return null;
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = line.text.slice(0, ctx.pos - line.from);
    const r = templateCompletions(before, hints.current);
    if (!r || (r.options.length === 0 && !ctx.explicit)) return null;
    return { from: line.from + r.from, options: r.options.map((label) => ({ label, type: 'variable' })), validFor: /^[A-Za-z0-9_-]*$/ };
  };
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
  /** the value is the text itself, not JSON */
  text?: boolean;
  /** offer template words inside `{{ … }}` */
  hints?: TemplateHints;
  /** the server's messages about this member, drawn as errors on the field */
  problems?: string[];
  /** told whether the text as it stands parses (null) or not (the error): a form that sends the text must not send the last value that did */
  onTextError?(error: string | null): void;
}

export function JsonEditor({ label, value, onChange, help, placeholder, minLines = 3, id, testId, text = false, hints, problems = [], onTextError }: JsonEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const onTextErrorRef = useRef(onTextError);
  onTextErrorRef.current = onTextError;
  const hintsRef = useRef(hints);
  hintsRef.current = hints;
  const parse = text ? parseText : parseJsonText;
  const format = text ? textOf : jsonText;
  const [error, setError] = useState<string | null>(null);
  const autoId = useId();
  const labelId = `${id ?? autoId}-label`;
  const helpId = `${id ?? autoId}-help`;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: format(value),
        extensions: [
          ...(text ? [] : [lineNumbers(), json()]),
          history(),
          bracketMatching(),
          ...(hints ? [autocompletion({ override: [templateSource(hintsRef)], icons: false })] : []),
          syntaxHighlighting(defaultHighlightStyle),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-labelledby': labelId, 'aria-describedby': helpId, 'aria-multiline': 'true', role: 'textbox' }),
          ...(placeholder ? [cmPlaceholder(placeholder)] : []),
          EditorView.theme({ '.cm-content': { minHeight: `${minLines * 1.45}em` } }),
          EditorView.updateListener.of((u) => {
            if (!u.docChanged) return;
            const parsed = parse(u.state.doc.toString());
            if (parsed.ok) {
              setError(null);
              onTextErrorRef.current?.(null);
              onChangeRef.current(parsed.value);
            } else {
              setError(parsed.error);
              onTextErrorRef.current?.(parsed.error);
            }
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
    const current = parse(v.state.doc.toString());
    if (current.ok && JSON.stringify(current.value) === JSON.stringify(value)) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: format(value) } });
    // parse and format follow `text`, which is fixed for the editor's life
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);

  return (
    <div className={`field json-field${text ? ' text-field' : ''}`} data-testid={testId} data-invalid={problems.length > 0 ? 'true' : undefined}>
      <span className="field-label" id={labelId}>
        {label}
      </span>
      <div ref={host} className={`cm-host${error || problems.length > 0 ? ' is-invalid' : ''}`} />
      <div id={helpId}>
        {problems.map((p) => (
          <p key={p} className="field-error">
            {p}
          </p>
        ))}
        <p className={error ? 'field-error' : 'field-help'}>{error ? `Not JSON (nothing changed): ${error}` : help}</p>
      </div>
    </div>
  );
}
