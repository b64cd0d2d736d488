/**
 * The graph editor (`/console/editor`, code-split): palette, canvas and inspector, the
 * validation strip, a JSON view of the whole graph kept in sync both ways, and the flow
 * Validate → Save (409 offers a reload) → Start, and the version list (an old version opens
 * read-only; restoring it loads it into the canvas as an unsaved change), two versions compared
 * side by side, undo / redo, keyboard shortcuts (model/shortcuts.ts; `?` shows them) and
 * finding a node by key or label. What is edited and
 * what is selected or shown are in the URL (search.ts), so a reload reopens the same view;
 * leaving with unsaved changes asks first.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { getRouteApi, useBlocker, useNavigate } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ReactFlowProvider, getNodesBounds, getViewportForBounds, useReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './editor.css';
import type { NodeKind } from '@flowline/graph';
import { useClient, useCan } from '../session/session';
import { keys, useAgentIndex } from '../api/queries';
import { Loading, RefusalNote } from '../ui/primitives';
import { FlowCanvas } from './canvas/FlowCanvas';
import { Palette } from './Palette';
import { Inspector, type Selection } from './inspector/Inspector';
import { JsonEditor } from './inspector/JsonEditor';
import { ValidationStrip } from './ValidationStrip';
import { VersionsPanel } from './VersionsPanel';
import { DiffView } from './DiffView';
import { sameEdited, type EditorPanel, type EditorSearch } from './search';
import { ConflictDialog, DeleteDialog, LeaveDialog, NewDialog, OpenDialog, ShortcutSheet } from './dialogs';
import { StartRunDialog } from '../definitions/StartRunDialog';
import { NodeSearchDialog } from './NodeSearchDialog';
import { isTypingTarget, shortcutOf, type ShortcutAction } from './model/shortcuts';
import { SAMPLES } from './samples';
import { arrange, canvasToGraph, graphToCanvas, kindOf, CARD_HEIGHT, CARD_WIDTH, type CanvasModel } from './model/canvas';
import { placeNewNode, type Rect } from './model/placement';
import { addNode } from './model/edit';
import { BLANK_GRAPH, isVersionConflict, loadedOf, useEditorState, type Loaded } from './use-editor';

const route = getRouteApi('/editor');

type DialogName = 'new' | 'open' | 'start' | 'conflict' | 'delete' | 'shortcuts' | 'search' | null;

function download(name: string, href: string) {
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

function fileName(name: string, ext: string): string {
  return `${name.trim().replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-|-$/g, '') || 'workflow'}.${ext}`;
}

/** A canvas node's rectangle in flow coordinates (its measured size once drawn, the card's before). */
function rectOf(n: { position: { x: number; y: number }; measured?: { width?: number; height?: number } }): Rect {
  return { x: n.position.x, y: n.position.y, width: n.measured?.width ?? CARD_WIDTH, height: n.measured?.height ?? CARD_HEIGHT };
}

/** The selection the URL names, when that element exists. */
function selectionOf(search: EditorSearch, model: CanvasModel): Selection {
  if (search.node && model.nodes.some((n) => n.id === search.node)) return { kind: 'node', key: search.node };
  if (search.edge && model.edges.some((e) => e.id === search.edge)) return { kind: 'edge', key: search.edge };
  return null;
}

const noop = () => undefined;

interface CoreProps {
  initial: Loaded;
  /** the saved version shown read-only (null: editing) */
  readOnlyVersion: number | null;
  /** the saved version loaded into the canvas as an unsaved change (null: none) */
  restoredFrom: number | null;
}

function EditorCore({ initial, readOnlyVersion, restoredFrom }: CoreProps) {
  const search = route.useSearch();
  const client = useClient();
  const canDefine = useCan('define');
  const canRun = useCan('run');
  const navigate = useNavigate({ from: '/editor' });
  const queryClient = useQueryClient();
  const rf = useReactFlow();
  const ed = useEditorState(initial, { validate: canDefine });
  // an old version, or a key that cannot define: looked at, never edited
  const readOnly = readOnlyVersion !== null || !canDefine;
  const { model, setModel, meta, setMeta, issues } = ed;
  // a version shown read-only is never an unsaved change, even when it opens laid out
  const dirty = !readOnly && ed.dirty;
  const [selection, setSelection] = useState<Selection>(() => selectionOf(search, ed.model));
  const [panel, setPanel] = useState<EditorPanel | null>(search.panel ?? null);
  const showJson = panel === 'json';
  // two saved versions compared side by side, in place of the canvas
  const diff = meta.definitionId && search.diffFrom !== undefined && search.diffTo !== undefined ? { from: search.diffFrom, to: search.diffTo } : null;
  const [dialog, setDialog] = useState<DialogName>(null);
  // each press of the toolbar's State button: the graph's State section is scrolled into view once drawn
  const [stateAsked, setStateAsked] = useState(0);
  useEffect(() => {
    if (stateAsked > 0) document.getElementById('graph-state')?.scrollIntoView({ block: 'start' });
  }, [stateAsked]);
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const exportMenu = useRef<HTMLDetailsElement>(null);
  const closeExport = () => exportMenu.current?.removeAttribute('open');
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;

  const tools = useQuery({ queryKey: ['tools'], queryFn: () => client.tools.list(), staleTime: 60_000 });
  const defs = useQuery({ queryKey: [...keys.definitions, 'index'], queryFn: () => client.definitions.list({ limit: 200 }), staleTime: 30_000 });
  const agents = useAgentIndex();
  const pickers = useMemo(
    () => ({
      tools: (tools.data?.items ?? []).map((t) => t.name),
      definitions: (defs.data?.items ?? []).map((d) => ({ id: d.id, name: d.name })),
      agents: (agents.data?.items ?? []).map((a) => ({ id: a.id, name: a.name, latestVersion: a.latestVersion })),
    }),
    [tools.data, defs.data, agents.data],
  );

  const blocker = useBlocker({
    // a change of selection or of the same definition's URL is not leaving
    shouldBlockFn: ({ current, next }) =>
      dirtyRef.current && !(current.pathname === next.pathname && sameEdited(current.search as EditorSearch, next.search as EditorSearch)),
    enableBeforeUnload: () => dirtyRef.current,
    withResolver: true,
  });

  /** The part of the graph the canvas shows, in flow coordinates (null before it is drawn). */
  const toFlow = useCallback(
    (el: Element | null): Rect | null => {
      const r = el?.getBoundingClientRect();
      if (!r || r.width === 0 || r.height === 0) return null;
      const a = rf.screenToFlowPosition({ x: r.left, y: r.top });
      const b = rf.screenToFlowPosition({ x: r.right, y: r.bottom });
      return { x: a.x, y: a.y, width: b.x - a.x, height: b.y - a.y };
    },
    [rf],
  );
  const visibleFlow = useCallback(() => toFlow(document.querySelector('.editor .canvas .react-flow')), [toFlow]);
  /** What the canvas draws over the graph (minimap, zoom controls), in flow coordinates: no place for a new node. */
  const overlaysFlow = useCallback(
    () => [...document.querySelectorAll('.editor .canvas .react-flow__minimap, .editor .canvas .react-flow__controls')].flatMap((el) => toFlow(el) ?? []),
    [toFlow],
  );

  const select = useCallback(
    (s: Selection) => {
      setSelection(s);
      if (s?.kind !== 'node') return;
      // a node out of view (picked from the issue list, say) is brought into it; the zoom stays
      const n = rf.getNode(s.key);
      const view = visibleFlow();
      if (!n || !view) return;
      const box = rectOf(n);
      const seen = box.x >= view.x && box.y >= view.y && box.x + box.width <= view.x + view.width && box.y + box.height <= view.y + view.height;
      if (!seen) void rf.setCenter(box.x + box.width / 2, box.y + box.height / 2, { zoom: rf.getZoom(), duration: 250 });
    },
    [rf, visibleFlow],
  );

  // a removed (or renamed away) element is no longer selected: the inspector falls back to the graph's settings
  const selectionGone =
    selection !== null && !(selection.kind === 'node' ? model.nodes.some((n) => n.id === selection.key) : model.edges.some((e) => e.id === selection.key));
  useEffect(() => {
    if (selectionGone) setSelection(null);
  }, [selectionGone]);

  // the selection and the side panel follow into the URL (replaced, not pushed): a reload reopens them
  useEffect(() => {
    const node = selection?.kind === 'node' ? selection.key : undefined;
    const edge = selection?.kind === 'edge' ? selection.key : undefined;
    const shown = panel ?? undefined;
    if (search.node === node && search.edge === edge && search.panel === shown) return;
    void navigate({ search: (prev: EditorSearch) => ({ ...prev, node, edge, panel: shown }), replace: true });
  }, [selection, panel, search.node, search.edge, search.panel, navigate]);

  const addFromPalette = useCallback(
    (kind: NodeKind) => {
      const view = visibleFlow();
      const overlays = overlaysFlow();
      setModel((m) => {
        const anchor = (selection?.kind === 'node' ? m.nodes.find((n) => n.id === selection.key) : undefined) ?? m.nodes.at(-1);
        // in free space inside what the canvas shows: seen at once, over no other node
        const taken = [...m.nodes.map((n) => rectOf(rf.getNode(n.id) ?? n)), ...overlays];
        const at = view ? placeNewNode({ view, taken, anchor: anchor ? rectOf(rf.getNode(anchor.id) ?? anchor) : null }) : { x: 0, y: 0 };
        const r = addNode(m, kind, at);
        setSelection({ kind: 'node', key: r.key });
        return r.model;
      });
    },
    [setModel, selection, rf, visibleFlow, overlaysFlow],
  );

  const save = async () => {
    setBusy(true);
    setActionError(null);
    try {
      const d = await ed.save();
      dirtyRef.current = false;
      setNotice({ tone: 'info', text: `Saved version ${d.version}.` });
      void queryClient.invalidateQueries({ queryKey: keys.definitions });
      queryClient.setQueryData(keys.definition(d.id), d);
      if (meta.definitionId !== d.id || restoredFrom !== null) void navigate({ search: { definitionId: d.id, node: search.node, edge: search.edge, panel: search.panel }, replace: true });
    } catch (err) {
      if (isVersionConflict(err)) setDialog('conflict');
      else setActionError(err);
    } finally {
      setBusy(false);
    }
  };

  const reload = async () => {
    if (!meta.definitionId) return;
    setDialog(null);
    try {
      const d = await client.definitions.get(meta.definitionId);
      queryClient.setQueryData(keys.definition(d.id), d);
      ed.load(loadedOf(d));
      setSelection(null);
      setNotice({ tone: 'info', text: `Reloaded version ${d.version}.` });
    } catch (err) {
      setActionError(err);
    }
  };

  const act = async (f: () => Promise<void>) => {
    setBusy(true);
    setActionError(null);
    try {
      await f();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
    }
  };

  const exportText = (format: 'mermaid' | 'dot') =>
    act(async () => {
      const r = await client.definitions.render(meta.definitionId!, format);
      download(fileName(meta.name, format === 'dot' ? 'dot' : 'mmd'), URL.createObjectURL(new Blob([r.text], { type: 'text/plain' })));
    });

  const exportPng = () =>
    act(async () => {
      const { toPng } = await import('html-to-image');
      const viewport = document.querySelector<HTMLElement>('.editor .react-flow__viewport');
      if (!viewport) return;
      const bounds = getNodesBounds(rf.getNodes());
      const width = Math.min(4000, Math.ceil(bounds.width + 160));
      const height = Math.min(4000, Math.ceil(bounds.height + 160));
      const vp = getViewportForBounds(bounds, width, height, 0.1, 2, 0.08);
      const url = await toPng(viewport, {
        backgroundColor: '#f5f6f8',
        width,
        height,
        style: { width: `${width}px`, height: `${height}px`, transform: `translate(${vp.x}px, ${vp.y}px) scale(${vp.zoom})` },
      });
      download(fileName(meta.name, 'png'), url);
    });

  // only the JSON view reads the whole document
  const graphJson = useMemo(() => (showJson ? canvasToGraph(model) : null), [model, showJson]);
  const hasErrors = issues.errorCount > 0;
  const chat = model.rest.kind === 'Chat';
  const saved = meta.definitionId !== null;

  const canSave = canDefine && !readOnly && !busy && !hasErrors && (!saved || dirty);
  const searchable = useMemo(
    () => (dialog === 'search' ? model.nodes.map((n) => ({ key: n.id, label: typeof n.data.doc.label === 'string' && n.data.doc.label !== '' ? n.data.doc.label : n.id, kind: kindOf(n.data.doc) ?? '?' })) : []),
    [dialog, model.nodes],
  );
  /** Selects a node and centres the view on it at a legible zoom (a large graph is first shown zoomed out). */
  const jumpTo = (key: string) => {
    setDialog(null);
    setPanel((p) => (p === 'versions' ? null : p));
    setSelection({ kind: 'node', key });
    const n = rf.getNode(key);
    if (!n) return;
    const box = rectOf(n);
    void rf.setCenter(box.x + box.width / 2, box.y + box.height / 2, { zoom: Math.max(rf.getZoom(), 1), duration: 250 });
  };

  const onShortcut = (action: ShortcutAction, e: KeyboardEvent) => {
    if (action === 'escape') {
      closeExport();
      if (selection) select(null);
      return;
    }
    e.preventDefault();
    if (action === 'help') setDialog('shortcuts');
    else if (action === 'search') setDialog('search');
    else if (action === 'save') {
      if (canSave) void save();
      else if (canDefine && !readOnly) setNotice({ tone: 'info', text: hasErrors ? 'Not saved: fix the errors first.' : busy ? 'Saving…' : 'Nothing to save: no unsaved changes.' });
    } else if (!readOnly) (action === 'undo' ? ed.undo : ed.redo)();
  };
  const shortcutRef = useRef(onShortcut);
  shortcutRef.current = onShortcut;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // an open dialog owns the keyboard (Escape closes it); the diff view shows no editable canvas
      if (document.querySelector('dialog[open]') || document.querySelector('.diff-view')) return;
      const action = shortcutOf({ key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, shiftKey: e.shiftKey, altKey: e.altKey, typing: isTypingTarget(document.activeElement) });
      if (action) shortcutRef.current(action, e);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => setNotice(null), 5000);
    return () => clearTimeout(t);
  }, [notice]);

  return (
    <div className="editor">
      <header className="editor-bar">
        <div className="editor-title">
          <input aria-label="Definition name" className="title-input" value={meta.name} readOnly={readOnly} onChange={(e) => setMeta({ ...meta, name: e.target.value })} />
          <span className="muted small" data-testid="editor-status">
            {readOnly ? `${readOnlyVersion !== null ? `v${readOnlyVersion}` : saved ? `v${meta.version}` : 'not saved'} · read-only` : saved ? `v${meta.version}` : 'not saved yet'}
            {restoredFrom !== null && dirty ? ` · restored from v${restoredFrom}` : ''}
            {readOnly ? '' : dirty ? ' · unsaved changes' : saved ? ' · saved' : ''}
            {model.laidOut.length > 0 && dirty ? ' · laid out' : ''}
          </span>
          <div className="editor-quick" role="toolbar" aria-label="Edit history and finding">
            <button type="button" className="btn btn-sm" disabled={readOnly || !ed.canUndo} onClick={ed.undo} title="Undo (Ctrl+Z)" aria-keyshortcuts="Control+Z">
              Undo
            </button>
            <button type="button" className="btn btn-sm" disabled={readOnly || !ed.canRedo} onClick={ed.redo} title="Redo (Ctrl+Shift+Z)" aria-keyshortcuts="Control+Shift+Z Control+Y">
              Redo
            </button>
            <button type="button" className="btn btn-sm" onClick={() => setDialog('search')} title="Find a node (Ctrl+K)" aria-keyshortcuts="Control+K /">
              Find
            </button>
            <button type="button" className="btn btn-sm" onClick={() => setDialog('shortcuts')} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" aria-keyshortcuts="?">
              ?
            </button>
          </div>
        </div>
        <div className="editor-actions" role="toolbar" aria-label="Editor actions">
          <button type="button" className="btn btn-sm" onClick={() => setDialog('new')}>
            New
          </button>
          <button type="button" className="btn btn-sm" onClick={() => setDialog('open')}>
            Open
          </button>
          <button type="button" className="btn btn-sm" disabled={readOnly} onClick={() => setModel((m) => arrange(m))}>
            Auto-arrange
          </button>
          <button type="button" className={`btn btn-sm${showJson ? ' is-on' : ''}`} aria-pressed={showJson} onClick={() => setPanel((v) => (v === 'json' ? null : 'json'))}>
            JSON
          </button>
          <button
            type="button"
            className="btn btn-sm"
            title="The graph's run state: keys, reducers, schema, initial"
            onClick={() => {
              // the graph's settings hold the State section: nothing selected, no side panel
              setPanel(null);
              select(null);
              setStateAsked((n) => n + 1);
            }}
          >
            State
          </button>
          {saved ? (
            <button
              type="button"
              className={`btn btn-sm${panel === 'versions' ? ' is-on' : ''}`}
              aria-pressed={panel === 'versions'}
              onClick={() => setPanel((v) => (v === 'versions' ? null : 'versions'))}
            >
              Versions
            </button>
          ) : null}
          <details className="menu" ref={exportMenu}>
            <summary className="btn btn-sm">Export</summary>
            <div className="menu-items">
              <button type="button" className="btn btn-sm btn-ghost" disabled={!saved || dirty || readOnly} title={!saved || dirty ? 'Save first' : undefined} onClick={() => void exportText('mermaid').finally(closeExport)}>
                Mermaid
              </button>
              <button type="button" className="btn btn-sm btn-ghost" disabled={!saved || dirty || readOnly} title={!saved || dirty ? 'Save first' : undefined} onClick={() => void exportText('dot').finally(closeExport)}>
                DOT
              </button>
              <button type="button" className="btn btn-sm btn-ghost" onClick={() => void exportPng().finally(closeExport)}>
                PNG
              </button>
            </div>
          </details>
          {saved && canDefine && !readOnly ? (
            <>
              <button
                type="button"
                className="btn btn-sm"
                disabled={busy || dirty}
                title={dirty ? 'Save first' : undefined}
                onClick={() =>
                  void act(async () => {
                    const copy = await client.definitions.duplicate(meta.definitionId!);
                    void queryClient.invalidateQueries({ queryKey: keys.definitions });
                    void navigate({ search: { definitionId: copy.id } });
                  })
                }
              >
                Duplicate
              </button>
              <button type="button" className="btn btn-sm btn-danger" disabled={busy} onClick={() => setDialog('delete')}>
                Delete
              </button>
            </>
          ) : null}
          <span className="bar-sep" aria-hidden="true" />
          <button type="button" className="btn btn-sm" disabled={ed.validating || readOnly} onClick={() => void ed.validateNow()}>
            Validate
          </button>
          {canDefine && !readOnly ? (
            <button
              type="button"
              className="btn btn-sm btn-primary"
              disabled={!canSave}
              onClick={() => void save()}
              title={hasErrors ? 'Fix the errors first' : 'Save (Ctrl+S)'}
              aria-keyshortcuts="Control+S"
            >
              {busy ? 'Saving…' : 'Save'}
            </button>
          ) : null}
          {canRun && !readOnly && (model.rest.kind ?? 'Standard') !== 'Chat' ? (
            <button type="button" className="btn btn-sm btn-primary" disabled={!saved || dirty || hasErrors} title={dirty ? 'Save first' : undefined} onClick={() => setDialog('start')}>
              Start
            </button>
          ) : null}
        </div>
      </header>
      {notice ? (
        <div className={`notice editor-notice${notice.tone === 'error' ? ' notice-warn' : ''}`} role="status">
          {notice.text}
        </div>
      ) : null}
      {readOnlyVersion !== null && meta.definitionId ? (
        <div className="notice readonly-banner" role="note" aria-label="Read-only version">
          <span>
            Version {readOnlyVersion} of this definition, read-only{meta.version !== null ? ` (the current version is v${meta.version})` : ''}.
          </span>
          {canDefine ? (
            <button type="button" className="btn btn-sm btn-primary" onClick={() => void navigate({ search: { definitionId: meta.definitionId!, restore: readOnlyVersion, panel: 'versions' } })}>
              Restore this version
            </button>
          ) : null}
          <button type="button" className="btn btn-sm" onClick={() => void navigate({ search: { definitionId: meta.definitionId!, panel: 'versions' } })}>
            Open the current version
          </button>
        </div>
      ) : null}
      {!canDefine ? (
        <div className="notice readonly-banner" role="note" aria-label="Read-only editor">
          <span>Read-only: this key cannot change definitions (it lacks the define scope).</span>
        </div>
      ) : null}
      <RefusalNote error={actionError} />
      {diff ? (
        <DiffView
          key={`${diff.from}-${diff.to}`}
          definitionId={meta.definitionId!}
          from={diff.from}
          to={diff.to}
          onClose={() => void navigate({ search: (prev: EditorSearch) => ({ ...prev, diffFrom: undefined, diffTo: undefined }) })}
        />
      ) : (
        <div className={`editor-body${showJson ? ' with-json' : ''}${readOnly ? ' is-readonly' : ''}`}>
          <Palette onAdd={readOnly ? noop : addFromPalette} chat={chat} disabled={readOnly} />
          <FlowCanvas
            model={model}
            setModel={setModel}
            issues={issues}
            selection={selection}
            select={select}
            readOnly={readOnly}
            onRefused={(text) => setNotice({ tone: 'error', text })}
            onNotice={(text) => setNotice({ tone: 'info', text })}
          />
          {panel === 'versions' && meta.definitionId ? (
            <VersionsPanel
              definitionId={meta.definitionId}
              current={meta.version}
              viewing={readOnlyVersion}
              onOpen={(v) =>
                void navigate({ search: v === meta.version ? { definitionId: meta.definitionId!, panel: 'versions' } : { definitionId: meta.definitionId!, version: v, panel: 'versions' } })
              }
              onCompare={(diffFrom, diffTo) => void navigate({ search: (prev: EditorSearch) => ({ ...prev, node: undefined, edge: undefined, diffFrom, diffTo }) })}
            />
          ) : showJson ? (
            <aside className="inspector json-view" aria-label="Graph JSON">
              <JsonEditor
                label="The whole graph (JSON)"
                value={graphJson}
                onChange={(v) => {
                  if (!readOnly && v && typeof v === 'object' && !Array.isArray(v)) setModel(() => graphToCanvas(v));
                }}
                help="Edits here redraw the canvas; canvas edits rewrite this text. Text that is not JSON changes nothing."
                minLines={20}
                testId="graph-json"
              />
            </aside>
          ) : (
            <Inspector
              model={model}
              setModel={readOnly ? noop : setModel}
              meta={meta}
              setMeta={readOnly ? noop : setMeta}
              selection={selection}
              select={select}
              issues={issues}
              pickers={pickers}
              readOnly={readOnly}
            />
          )}
        </div>
      )}
      <ValidationStrip
        issues={issues}
        validating={ed.validating}
        error={ed.validateError}
        select={select}
        unavailable={canDefine ? null : 'Validating needs the define scope.'}
      />

      {dialog === 'new' ? (
        <NewDialog
          onClose={() => setDialog(null)}
          onBlank={() => {
            setDialog(null);
            void navigate({ search: { new: String(Date.now()) } });
          }}
          onSample={(s) => {
            setDialog(null);
            void navigate({ search: { sample: s.id } });
          }}
        />
      ) : null}
      {dialog === 'open' ? (
        <OpenDialog
          onClose={() => setDialog(null)}
          onOpen={(id) => {
            setDialog(null);
            void navigate({ search: { definitionId: id } });
          }}
        />
      ) : null}
      {dialog === 'start' && meta.definitionId ? (
        <StartRunDialog definition={{ id: meta.definitionId, name: meta.name }} onClose={() => setDialog(null)} />
      ) : null}
      {dialog === 'shortcuts' ? <ShortcutSheet onClose={() => setDialog(null)} /> : null}
      {dialog === 'search' ? <NodeSearchDialog nodes={searchable} onPick={jumpTo} onClose={() => setDialog(null)} /> : null}
      {dialog === 'conflict' ? <ConflictDialog onClose={() => setDialog(null)} onReload={() => void reload()} /> : null}
      {dialog === 'delete' ? (
        <DeleteDialog
          name={meta.name}
          onStay={() => setDialog(null)}
          onDelete={() =>
            void act(async () => {
              await client.definitions.delete(meta.definitionId!);
              dirtyRef.current = false;
              setDialog(null);
              void queryClient.invalidateQueries({ queryKey: keys.definitions });
              void navigate({ search: { new: String(Date.now()) } });
            }).finally(() => setDialog(null))
          }
        />
      ) : null}
      {blocker.status === 'blocked' ? <LeaveDialog onStay={() => blocker.reset()} onLeave={() => blocker.proceed()} /> : null}
    </div>
  );
}

/** The editor route: loads what the URL names, then edits it. */
export function EditorPage() {
  const search = route.useSearch();
  const client = useClient();
  const def = useQuery({
    queryKey: keys.definition(search.definitionId ?? ''),
    queryFn: () => client.definitions.get(search.definitionId!),
    enabled: !!search.definitionId,
    staleTime: 0,
  });
  const older = search.version ?? search.restore;
  const ver = useQuery({
    queryKey: [...keys.definition(search.definitionId ?? ''), 'version', older ?? 0],
    queryFn: () => client.definitions.version(search.definitionId!, older!),
    enabled: !!search.definitionId && older !== undefined,
    // a saved version never changes
    staleTime: Infinity,
  });
  const sample = search.sample ? SAMPLES.find((s) => s.id === search.sample) : undefined;
  let initial: Loaded | null = null;
  let identity = 'blank';
  let readOnlyVersion: number | null = null;
  let restoredFrom: number | null = null;
  if (search.definitionId) {
    const current = def.data && def.data.id === search.definitionId ? loadedOf(def.data) : null;
    if (current && older === undefined) {
      initial = current;
      identity = `def-${current.meta.definitionId}`;
    } else if (current && ver.data && ver.data.version === older) {
      // the old version's document and names, over the current version number (a save updates from it)
      const meta = { ...current.meta, name: ver.data.name, description: ver.data.description ?? '' };
      initial = { meta, graph: ver.data.graph, saved: search.version !== undefined };
      readOnlyVersion = search.version ?? null;
      restoredFrom = search.restore ?? null;
      identity = `${search.version !== undefined ? 'version' : 'restore'}-${current.meta.definitionId}-${older}`;
    }
  } else if (sample) {
    initial = { meta: { definitionId: null, name: sample.name, description: sample.description, version: null }, graph: sample.graph, saved: false };
    identity = `sample-${sample.id}`;
  } else {
    initial = { meta: { definitionId: null, name: 'Untitled workflow', description: '', version: null }, graph: BLANK_GRAPH, saved: false };
    identity = `blank-${search.new ?? ''}`;
  }
  return (
    <div className="editor-page">
      {search.definitionId && def.isPending ? <Loading label="Reading the definition" /> : null}
      {older !== undefined && ver.isPending ? <Loading label={`Reading version ${older}`} /> : null}
      <RefusalNote error={def.error} title="Could not open the definition" />
      <RefusalNote error={ver.error} title={`Could not open version ${older ?? ''}`} />
      {initial ? (
        <ReactFlowProvider key={identity}>
          <EditorCore initial={initial} readOnlyVersion={readOnlyVersion} restoredFrom={restoredFrom} />
        </ReactFlowProvider>
      ) : null}
    </div>
  );
}
