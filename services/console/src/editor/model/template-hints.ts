/**
 * What a template field offers inside `{{ … }}`: the four roots a template reads (`input`,
 * `state`, `upstream`, `run`) and, after a root and a dot, what the document being edited
 * says lies there — the state keys the graph declares or writes, the other nodes' keys, the
 * run's input. Pure: the completion widget (inspector/code-editor.ts) asks it for the words
 * that may follow the text before the caret.
 */
import type { CanvasModel, Doc } from './canvas';

/** What the graph being edited tells a template. */
export interface TemplateHints {
  stateKeys: string[];
  nodeKeys: string[];
}

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every state key the document names: `state.reducers`, `state.initial`, the members of
 * `state.schema` (its `properties`, or the schema itself read as key → schema), and each
 * node's `writes`; sorted.
 */
export function stateKeysOf(m: CanvasModel): string[] {
  const state = isDoc(m.rest.state) ? m.rest.state : {};
  const keys = new Set<string>();
  for (const member of ['reducers', 'initial'] as const) if (isDoc(state[member])) for (const k of Object.keys(state[member])) keys.add(k);
  const schema = state.schema;
  if (isDoc(schema)) for (const k of Object.keys(isDoc(schema.properties) ? schema.properties : 'type' in schema ? {} : schema)) keys.add(k);
  for (const n of m.nodes) if (isDoc(n.data.doc.writes)) for (const k of Object.keys(n.data.doc.writes)) keys.add(k);
  return [...keys].sort();
}

/** The hints for a template of node `self` (it is not its own upstream). */
export function templateHints(m: CanvasModel, self: string): TemplateHints {
  return { stateKeys: stateKeysOf(m), nodeKeys: m.nodes.map((n) => n.id).filter((k) => k !== self).sort() };
}

const ROOTS = ['input', 'state', 'upstream', 'run'];

/**
 * The completions for `before` (the text from the line's start to the caret): null when the
 * caret is not inside an open `{{` or `{%`; else the path typed so far (`from` is where its
 * last segment starts, relative to `before`) and the words that may end it.
 */
export function templateCompletions(before: string, hints: TemplateHints): { from: number; options: string[] } | null {
  const open = Math.max(before.lastIndexOf('{{'), before.lastIndexOf('{%'));
  if (open < 0 || before.indexOf('}}', open) >= 0 || before.indexOf('%}', open) >= 0) return null;
  const path = /[A-Za-z0-9_.-]*$/.exec(before)![0];
  const segments = path.split('.');
  const last = segments.pop()!;
  const from = before.length - last.length;
  const options = ((): string[] => {
    if (segments.length === 0) return ROOTS;
    const [root, second] = segments;
    if (segments.length === 1) {
      if (root === 'state') return hints.stateKeys;
      if (root === 'upstream') return hints.nodeKeys;
      if (root === 'run') return ['input'];
      if (root === 'input') return ['output'];
      return [];
    }
    if (segments.length === 2 && root === 'upstream' && second !== undefined && hints.nodeKeys.includes(second)) return ['output'];
    return [];
  })();
  return { from, options };
}
