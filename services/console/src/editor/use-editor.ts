/**
 * The editor's state: the canvas model, the definition's name / description / version, what
 * was opened or last saved (dirty = the document or the names differ from it: only an explicit
 * change, never the layout of nodes that came without positions), the server's verdict on
 * the current document (`POST /v1/definitions/validate`, debounced, the only authority) and
 * the save (create, or update with the version read: a 409 VersionConflict is kept for the
 * page to offer a reload), and the undo history of the graph (model/history.ts): a step is the
 * document as it stands once the model has been still for {@link SETTLE_MS}, so a drag or a
 * burst of typing is one step, and a node's measured size is none.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { isApiRequestError, type Definition, type GraphValidation } from '@flowline/client';
import { useClient } from '../session/session';
import { canvasToGraph, graphToCanvas, type CanvasModel } from './model/canvas';
import { NO_ISSUES, placeIssues, type IssueIndex } from './model/issues';
import { canRedo, canUndo, record, redo as redoStep, startHistory, undo as undoStep, type History } from './model/history';

/** Delay between the last change and its validation. */
export const VALIDATE_DEBOUNCE_MS = 350;

/** What the editor holds besides the canvas. */
export interface EditorMeta {
  definitionId: string | null;
  name: string;
  description: string;
  version: number | null;
}

/** The starter of a blank definition: Start → End. */
export const BLANK_GRAPH = {
  schemaVersion: 1,
  kind: 'Standard',
  nodes: [
    { key: 'start', kind: 'Start', position: { x: 0, y: 0 } },
    { key: 'end', kind: 'End', config: { outcome: 'done' }, position: { x: 310, y: 0 } },
  ],
  edges: [{ key: 'start-end', from: 'start', to: 'end' }],
};

const textOf = (m: CanvasModel) => JSON.stringify(canvasToGraph(m));

/** One undo step: the model and its document text (what tells two steps apart). */
interface Step {
  model: CanvasModel;
  text: string;
}
const sameStep = (a: Step, b: Step) => a.text === b.text;

/** How long the model must stay unchanged before its document text is derived again. */
export const SETTLE_MS = 120;

/**
 * `value`, once it has not changed for {@link SETTLE_MS} (the first value at once). While `hold`
 * is true nothing settles: a drag is one step however long the pointer rests mid-way (on a busy
 * machine a pause between two moves outlasts SETTLE_MS and would split the drag in two).
 */
export function useSettled<T>(value: T, hold = false): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (settled === value || hold) return;
    const t = setTimeout(() => setSettled(value), SETTLE_MS);
    return () => clearTimeout(t);
  }, [value, settled, hold]);
  return settled;
}

/** True while the pointer drags a node (React Flow marks the dragged nodes until the drop). */
export const isDragging = (m: CanvasModel): boolean => m.nodes.some((n) => n.dragging === true);

/** A model holding only the element keys (what placing issues reads). */
function keysModel(keys: string): CanvasModel {
  const [nodes = '', edges = ''] = keys.split('\u0000');
  const list = (s: string) => (s === '' ? [] : s.split('\n'));
  return {
    nodes: list(nodes).map((id) => ({ id, type: 'flow', position: { x: 0, y: 0 }, data: { doc: {} } })),
    edges: list(edges).map((id) => ({ id, source: '', target: '', data: { doc: {} } })),
    rest: {},
    laidOut: [],
  };
}

/** The text an opened document is compared with to tell an edit (null: it opens as an unsaved change). */
function baselineOf(l: Loaded, m: CanvasModel): string | null {
  return l.saved || l.meta.definitionId === null ? textOf(m) : null;
}

export interface Loaded {
  meta: EditorMeta;
  graph: unknown;
  /** the document is what is stored; false for a new one (blank or a sample: not dirty until edited) and for a restored version (dirty at once) */
  saved: boolean;
}

/** `validate`: ask the server's verdict (false for a key without the define scope: the route would refuse it). */
export function useEditorState(initial: Loaded, { validate = true }: { validate?: boolean } = {}) {
  const client = useClient();
  const [model, setModelState] = useState<CanvasModel>(() => graphToCanvas(initial.graph));
  const [meta, setMeta] = useState<EditorMeta>(initial.meta);
  // what the editor opened (or last saved): the document text and the names. Positions the layout
  // proposed for nodes that had none are part of it — laying out is not an edit — so an untouched
  // definition or sample is never an unsaved change. Only a version restored into the canvas
  // (a saved definition's id over a document that is not what is stored) opens as one.
  const [savedText, setSavedText] = useState<string | null>(() => baselineOf(initial, model));
  const [savedMeta, setSavedMeta] = useState<EditorMeta>(initial.meta);
  const [validation, setValidation] = useState<GraphValidation | null>(null);
  const [validating, setValidating] = useState(false);
  const [validateError, setValidateError] = useState<unknown>(null);

  // the document text is derived once the model has been still for SETTLE_MS: a drag's
  // burst of moves never pays for serialising the whole document
  const settled = useSettled(model, isDragging(model));
  const text = useMemo(() => textOf(settled), [settled]);
  // positions never change a verdict: validate only when the document without positions changes
  const semanticText = useMemo(() => JSON.stringify(canvasToGraph(settled), (k, v: unknown) => (k === 'position' ? undefined : v)), [settled]);
  const dirty = savedText === null || text !== savedText || meta.name !== savedMeta.name || meta.description !== savedMeta.description;

  const latest = useRef(0);
  const validateNow = useCallback(async (): Promise<GraphValidation | null> => {
    const ticket = ++latest.current;
    setValidating(true);
    try {
      const v = await client.definitions.validate(JSON.parse(semanticText));
      if (ticket === latest.current) {
        setValidation(v);
        setValidateError(null);
      }
      return v;
    } catch (err) {
      if (ticket === latest.current) setValidateError(err);
      return null;
    } finally {
      if (ticket === latest.current) setValidating(false);
    }
  }, [client, semanticText]);

  useEffect(() => {
    if (!validate) return;
    const t = setTimeout(() => void validateNow(), VALIDATE_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [validateNow, validate]);

  // issues follow the element keys, not their positions: the same index while nodes only move
  const elementKeys = useMemo(() => `${settled.nodes.map((n) => n.id).join('\n')}\u0000${settled.edges.map((e) => e.id).join('\n')}`, [settled]);
  const issues: IssueIndex = useMemo(
    () => (validation ? placeIssues(keysModel(elementKeys), validation) : NO_ISSUES),
    [elementKeys, validation],
  );

  const setModel = useCallback((next: CanvasModel | ((m: CanvasModel) => CanvasModel)) => setModelState(next), []);

  const [history, setHistory] = useState<History<Step>>(() => startHistory({ model, text: textOf(model) }));
  // each settled document is a step; a state set by undo or redo is the present already, so no new step
  useEffect(() => setHistory((h) => record(h, { model: settled, text }, sameStep)), [settled, text]);
  const modelRef = useRef(model);
  modelRef.current = model;
  const historyRef = useRef(history);
  historyRef.current = history;
  /** Moves through the history; a change not yet settled is recorded first, so it is what the first undo takes back. */
  const travel = useCallback((step: typeof undoStep) => {
    const m = modelRef.current;
    const h = step(record(historyRef.current, { model: m, text: textOf(m) }, sameStep));
    historyRef.current = h;
    setHistory(h);
    setModelState(h.present.model);
  }, []);
  const undo = useCallback(() => travel(undoStep), [travel]);
  const redo = useCallback(() => travel(redoStep), [travel]);

  /** Replaces everything with a loaded definition (after a reload, open or save). */
  const load = useCallback((l: Loaded) => {
    const m = graphToCanvas(l.graph);
    setModelState(m);
    setHistory(startHistory({ model: m, text: textOf(m) }));
    setMeta(l.meta);
    setSavedMeta(l.meta);
    setSavedText(baselineOf(l, m));
    setValidation(null);
  }, []);

  /** Creates or updates; resolves with the definition, throws the refusal (409 VersionConflict included). */
  const save = useCallback(async (): Promise<Definition> => {
    const graph = canvasToGraph(model);
    const body = { name: meta.name.trim() || 'Untitled', description: meta.description.trim() === '' ? null : meta.description };
    const d =
      meta.definitionId === null
        ? await client.definitions.create({ ...body, graph })
        : await client.definitions.update(meta.definitionId, { ...body, graph, version: meta.version ?? 1 });
    const nextMeta: EditorMeta = { definitionId: d.id, name: d.name, description: d.description ?? '', version: d.version };
    setMeta(nextMeta);
    setSavedMeta(nextMeta);
    setSavedText(JSON.stringify(graph));
    return d;
  }, [client, model, meta]);

  return {
    model,
    setModel,
    meta,
    setMeta,
    text,
    dirty,
    validation,
    validating,
    validateError,
    validateNow,
    issues,
    save,
    load,
    undo,
    redo,
    canUndo: canUndo(history),
    canRedo: canRedo(history),
  };
}

export type EditorState = ReturnType<typeof useEditorState>;

/** The definition a loaded answer describes. */
export function loadedOf(d: Definition): Loaded {
  return { meta: { definitionId: d.id, name: d.name, description: d.description ?? '', version: d.version }, graph: d.graph, saved: true };
}

/** True for a save refused because the definition changed since it was read. */
export const isVersionConflict = (err: unknown) => isApiRequestError(err, 'VersionConflict');
