/**
 * The graph editor (`/console/editor`, code-split): palette, canvas and inspector, the
 * validation strip, a JSON view of the whole graph kept in sync both ways, and the flow
 * Validate → Save (409 offers a reload) → Start. The definition (`definitionId`) or sample
 * (`sample`) being edited is in the URL; leaving with unsaved changes asks first.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { getRouteApi, useBlocker, useNavigate } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ReactFlowProvider, getNodesBounds, getViewportForBounds, useReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './editor.css';
import type { NodeKind } from '@flowline/graph';
import { useClient, useCan } from '../session/session';
import { keys } from '../api/queries';
import { Loading, RefusalNote } from '../ui/primitives';
import { FlowCanvas } from './canvas/FlowCanvas';
import { Palette } from './Palette';
import { Inspector, type Selection } from './inspector/Inspector';
import { JsonEditor } from './inspector/JsonEditor';
import { ValidationStrip } from './ValidationStrip';
import { ConflictDialog, DeleteDialog, LeaveDialog, NewDialog, OpenDialog, StartDialog } from './dialogs';
import { SAMPLES } from './samples';
import { arrange, canvasToGraph, configOf, graphToCanvas, kindOf, CARD_WIDTH } from './model/canvas';
import { addNode } from './model/edit';
import { BLANK_GRAPH, isVersionConflict, loadedOf, useEditorState, type Loaded } from './use-editor';

const route = getRouteApi('/editor');

type DialogName = 'new' | 'open' | 'start' | 'conflict' | 'delete' | null;

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

function EditorCore({ initial }: { initial: Loaded }) {
  const client = useClient();
  const canDefine = useCan('define');
  const canRun = useCan('run');
  const navigate = useNavigate({ from: '/editor' });
  const queryClient = useQueryClient();
  const rf = useReactFlow();
  const ed = useEditorState(initial);
  const { model, setModel, meta, setMeta, dirty, issues } = ed;
  const [selection, setSelection] = useState<Selection>(null);
  const [dialog, setDialog] = useState<DialogName>(null);
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [showJson, setShowJson] = useState(false);
  const exportMenu = useRef<HTMLDetailsElement>(null);
  const closeExport = () => exportMenu.current?.removeAttribute('open');
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;

  const tools = useQuery({ queryKey: ['tools'], queryFn: () => client.tools.list(), staleTime: 60_000 });
  const defs = useQuery({ queryKey: [...keys.definitions, 'index'], queryFn: () => client.definitions.list({ limit: 200 }), staleTime: 30_000 });
  const pickers = useMemo(
    () => ({ tools: (tools.data?.items ?? []).map((t) => t.name), definitions: (defs.data?.items ?? []).map((d) => ({ id: d.id, name: d.name })) }),
    [tools.data, defs.data],
  );

  const blocker = useBlocker({
    // a change of selection or of the same definition's URL is not leaving
    shouldBlockFn: ({ current, next }) =>
      dirtyRef.current &&
      !(current.pathname === next.pathname && (next.search as { definitionId?: string }).definitionId === (current.search as { definitionId?: string }).definitionId),
    enableBeforeUnload: () => dirtyRef.current,
    withResolver: true,
  });

  const select = useCallback(
    (s: Selection) => {
      setSelection(s);
      if (s?.kind === 'node') {
        const n = rf.getNode(s.key);
        if (n) void rf.setCenter(n.position.x + CARD_WIDTH / 2, n.position.y + 40, { zoom: Math.max(rf.getZoom(), 0.8), duration: 250 });
      }
    },
    [rf],
  );

  const addFromPalette = useCallback(
    (kind: NodeKind) => {
      setModel((m) => {
        const anchor = selection?.kind === 'node' ? m.nodes.find((n) => n.id === selection.key) : m.nodes.at(-1);
        const at = anchor ? { x: anchor.position.x + CARD_WIDTH + 90, y: anchor.position.y + (anchor === m.nodes.at(-1) ? 0 : 100) } : { x: 0, y: 0 };
        const r = addNode(m, kind, at);
        setSelection({ kind: 'node', key: r.key });
        return r.model;
      });
    },
    [setModel, selection],
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
      if (meta.definitionId !== d.id) void navigate({ search: { definitionId: d.id }, replace: true });
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

  const start = model.nodes.find((n) => kindOf(n.data.doc) === 'Start');
  const startSchemas: Array<[string, unknown]> = [
    ['inputSchema', model.rest.inputSchema],
    [`${start?.id ?? 'start'}.config.inputSchema`, start ? configOf(start.data.doc).inputSchema : undefined],
  ];
  // only the JSON view reads the whole document
  const graphJson = useMemo(() => (showJson ? canvasToGraph(model) : null), [model, showJson]);
  const hasErrors = issues.errorCount > 0;
  const chat = model.rest.kind === 'Chat';
  const saved = meta.definitionId !== null;

  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => setNotice(null), 5000);
    return () => clearTimeout(t);
  }, [notice]);

  return (
    <div className="editor">
      <header className="editor-bar">
        <div className="editor-title">
          <input aria-label="Definition name" className="title-input" value={meta.name} onChange={(e) => setMeta({ ...meta, name: e.target.value })} />
          <span className="muted small" data-testid="editor-status">
            {saved ? `v${meta.version}` : 'not saved yet'}
            {dirty ? ' · unsaved changes' : ' · saved'}
            {model.laidOut.length > 0 && dirty ? ' · laid out' : ''}
          </span>
        </div>
        <div className="editor-actions" role="toolbar" aria-label="Editor actions">
          <button type="button" className="btn btn-sm" onClick={() => setDialog('new')}>
            New
          </button>
          <button type="button" className="btn btn-sm" onClick={() => setDialog('open')}>
            Open
          </button>
          <button type="button" className="btn btn-sm" onClick={() => setModel((m) => arrange(m))}>
            Auto-arrange
          </button>
          <button type="button" className={`btn btn-sm${showJson ? ' is-on' : ''}`} aria-pressed={showJson} onClick={() => setShowJson((v) => !v)}>
            JSON
          </button>
          <details className="menu" ref={exportMenu}>
            <summary className="btn btn-sm">Export</summary>
            <div className="menu-items">
              <button type="button" className="btn btn-sm btn-ghost" disabled={!saved || dirty} title={!saved || dirty ? 'Save first' : undefined} onClick={() => void exportText('mermaid').finally(closeExport)}>
                Mermaid
              </button>
              <button type="button" className="btn btn-sm btn-ghost" disabled={!saved || dirty} title={!saved || dirty ? 'Save first' : undefined} onClick={() => void exportText('dot').finally(closeExport)}>
                DOT
              </button>
              <button type="button" className="btn btn-sm btn-ghost" onClick={() => void exportPng().finally(closeExport)}>
                PNG
              </button>
            </div>
          </details>
          {saved && canDefine ? (
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
          <button type="button" className="btn btn-sm" disabled={ed.validating} onClick={() => void ed.validateNow()}>
            Validate
          </button>
          {canDefine ? (
            <button type="button" className="btn btn-sm btn-primary" disabled={busy || hasErrors || !dirty} onClick={() => void save()} title={hasErrors ? 'Fix the errors first' : undefined}>
              {busy ? 'Saving…' : 'Save'}
            </button>
          ) : null}
          {canRun && (model.rest.kind ?? 'Standard') !== 'Chat' ? (
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
      <RefusalNote error={actionError} />
      <div className={`editor-body${showJson ? ' with-json' : ''}`}>
        <Palette onAdd={addFromPalette} chat={chat} />
        <FlowCanvas model={model} setModel={setModel} issues={issues} selection={selection} select={select} onRefused={(text) => setNotice({ tone: 'error', text })} />
        {showJson ? (
          <aside className="inspector json-view" aria-label="Graph JSON">
            <JsonEditor
              label="The whole graph (JSON)"
              value={graphJson}
              onChange={(v) => {
                if (v && typeof v === 'object' && !Array.isArray(v)) setModel(() => graphToCanvas(v));
              }}
              help="Edits here redraw the canvas; canvas edits rewrite this text. Text that is not JSON changes nothing."
              minLines={20}
              testId="graph-json"
            />
          </aside>
        ) : (
          <Inspector model={model} setModel={setModel} meta={meta} setMeta={setMeta} selection={selection} select={select} issues={issues} pickers={pickers} />
        )}
      </div>
      <ValidationStrip issues={issues} validating={ed.validating} error={ed.validateError} select={select} />

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
        <StartDialog
          definitionId={meta.definitionId}
          name={meta.name}
          defaultInput={start ? configOf(start.data.doc).defaultInput : undefined}
          schemas={startSchemas}
          onClose={() => setDialog(null)}
          onStarted={(runId) => void navigate({ to: '/run', search: { runId } })}
        />
      ) : null}
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
  const sample = search.sample ? SAMPLES.find((s) => s.id === search.sample) : undefined;
  let initial: Loaded | null = null;
  let identity = 'blank';
  if (search.definitionId) {
    if (def.data && def.data.id === search.definitionId) {
      initial = loadedOf(def.data);
      identity = `def-${def.data.id}`;
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
      <RefusalNote error={def.error} title="Could not open the definition" />
      {initial ? (
        <ReactFlowProvider key={identity}>
          <EditorCore initial={initial} />
        </ReactFlowProvider>
      ) : null}
    </div>
  );
}
