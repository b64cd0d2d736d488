/**
 * Two saved versions of a definition side by side (`GET /v1/definitions/{id}/diff?from&to`):
 * the older version's canvas on the left with what was removed or changed marked, the newer
 * one's on the right with what was added or changed marked, both read-only; beside them the
 * list of changes, member by member. Selecting a node or an edge on either side selects the
 * element of the same key on both; a change picked in the list selects its element and
 * centres both sides on it at a legible zoom (each side first shows its whole graph).
 */
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ReactFlowProvider, useReactFlow } from '@xyflow/react';
import type { DefinitionDiff, MemberChange } from '@flowline/client';
import { useClient } from '../session/session';
import { Loading, RefusalNote } from '../ui/primitives';
import { FlowCanvas } from './canvas/FlowCanvas';
import type { Selection } from './inspector/Inspector';
import { graphToCanvas, type CanvasModel } from './model/canvas';
import { changeCount, changeText, diffMarks, valueText, type DiffMark, type SideMarks } from './model/diff';
import { NO_ISSUES } from './model/issues';

const noop = () => undefined;

/** A node picked in the change list: each side centres it at a legible zoom (`n` counts the picks, so the same node can be picked again). */
interface Focus {
  key: string;
  n: number;
}

/** The zoom a picked node is shown at. */
const FOCUS_ZOOM = 1;

/** Centres the side's view on the picked node, when this side has it. */
function FollowFocus({ focus }: { focus: Focus | null }) {
  const rf = useReactFlow();
  useEffect(() => {
    const n = focus ? rf.getNode(focus.key) : undefined;
    if (!n) return;
    const w = n.measured?.width ?? 0;
    const h = n.measured?.height ?? 0;
    void rf.setCenter(n.position.x + w / 2, n.position.y + h / 2, { zoom: FOCUS_ZOOM, duration: 250 });
  }, [focus, rf]);
  return null;
}

/** One side: a version's graph, read-only, with the diff's marks. */
function Side(props: { title: string; graph: unknown; marks: SideMarks; selection: Selection; select(s: Selection): void; focus: Focus | null }) {
  const { title, graph, marks, selection, select, focus } = props;
  // the canvas keeps its own copy: React Flow reports the cards' measured sizes into it
  const [model, setModel] = useState<CanvasModel>(() => graphToCanvas(graph));
  return (
    <section className="diff-side" aria-label={title}>
      <h2 className="diff-side-title">{title}</h2>
      <ReactFlowProvider>
        <FlowCanvas model={model} setModel={setModel} issues={NO_ISSUES} selection={selection} select={select} onRefused={noop} readOnly marks={marks} minimap={false} />
        <FollowFocus focus={focus} />
      </ReactFlowProvider>
    </section>
  );
}

function Changes({ changes }: { changes: MemberChange[] }) {
  return (
    <ul className="diff-members">
      {changes.map((c) => (
        <li key={c.member} className="mono small">
          {changeText(c)}
        </li>
      ))}
    </ul>
  );
}

function ElementButton({ label, mark, onPick }: { label: string; mark: DiffMark; onPick(): void }) {
  return (
    <button type="button" className={`diff-element diff-${mark}`} onClick={onPick}>
      <span className="diff-chip">{mark}</span> <span className="mono">{label}</span>
    </button>
  );
}

/** The change list: nodes, edges, schemas and graph members. */
function ChangeList({ diff, select }: { diff: DefinitionDiff; select(s: Selection): void }) {
  const node = (key: string) => () => select({ kind: 'node', key });
  const edge = (key: string) => () => select({ kind: 'edge', key });
  return (
    <aside className="inspector diff-list" aria-label="Changes">
      <div className="inspector-body">
        <div className="inspector-head">
          <span className="kind-chip group-graph">Diff</span>
          <h2>
            v{diff.from} → v{diff.to}
          </h2>
          <p className="muted small" data-testid="diff-summary">
            {diff.identical ? 'The two versions are the same graph.' : `${changeCount(diff)} change${changeCount(diff) === 1 ? '' : 's'}.`}
          </p>
        </div>
        {diff.nodes.added.length + diff.nodes.removed.length + diff.nodes.changed.length > 0 ? (
          <>
            <h3>Nodes</h3>
            <ul className="diff-entries" aria-label="Node changes">
              {diff.nodes.removed.map((n) => (
                <li key={`r-${n.key}`} data-node={n.key} data-mark="removed">
                  <ElementButton label={`${n.key} (${n.kind})`} mark="removed" onPick={node(n.key)} />
                </li>
              ))}
              {diff.nodes.added.map((n) => (
                <li key={`a-${n.key}`} data-node={n.key} data-mark="added">
                  <ElementButton label={`${n.key} (${n.kind})`} mark="added" onPick={node(n.key)} />
                </li>
              ))}
              {diff.nodes.changed.map((n) => (
                <li key={`c-${n.key}`} data-node={n.key} data-mark="changed">
                  <ElementButton label={`${n.key} (${n.kind})`} mark="changed" onPick={node(n.key)} />
                  <Changes changes={n.changes} />
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {diff.edges.added.length + diff.edges.removed.length + diff.edges.changed.length > 0 ? (
          <>
            <h3>Edges</h3>
            <ul className="diff-entries" aria-label="Edge changes">
              {diff.edges.removed.map((e) => (
                <li key={`r-${e.key}`} data-edge={e.key} data-mark="removed">
                  <ElementButton label={`${e.key}: ${e.from} → ${e.to}`} mark="removed" onPick={edge(e.key)} />
                </li>
              ))}
              {diff.edges.added.map((e) => (
                <li key={`a-${e.key}`} data-edge={e.key} data-mark="added">
                  <ElementButton label={`${e.key}: ${e.from} → ${e.to}`} mark="added" onPick={edge(e.key)} />
                </li>
              ))}
              {diff.edges.changed.map((e) => (
                <li key={`c-${e.key}`} data-edge={e.key} data-mark="changed">
                  <ElementButton label={e.key} mark="changed" onPick={edge(e.key)} />
                  <Changes changes={e.changes} />
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {diff.inputSchema.changed || diff.stateSchema.changed || diff.graph.length > 0 ? (
          <>
            <h3>Graph</h3>
            <ul className="diff-members" aria-label="Graph changes">
              {diff.inputSchema.changed ? <li className="mono small">inputSchema: {valueText(diff.inputSchema.from)} → {valueText(diff.inputSchema.to)}</li> : null}
              {diff.stateSchema.changed ? <li className="mono small">state schema: {valueText(diff.stateSchema.from)} → {valueText(diff.stateSchema.to)}</li> : null}
              {diff.graph.map((c) => (
                <li key={c.member} className="mono small">
                  {changeText(c)}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
    </aside>
  );
}

export function DiffView({ definitionId, from, to, onClose }: { definitionId: string; from: number; to: number; onClose(): void }) {
  const client = useClient();
  // saved versions never change
  const older = useQuery({ queryKey: ['definition', definitionId, 'version', from], queryFn: () => client.definitions.version(definitionId, from), staleTime: Infinity });
  const newer = useQuery({ queryKey: ['definition', definitionId, 'version', to], queryFn: () => client.definitions.version(definitionId, to), staleTime: Infinity });
  const diff = useQuery({ queryKey: ['definition', definitionId, 'diff', from, to], queryFn: () => client.definitions.diff(definitionId, from, to), staleTime: Infinity });
  const [selection, setSelection] = useState<Selection>(null);
  const [focus, setFocus] = useState<Focus | null>(null);
  const pick = (s: Selection) => {
    setSelection(s);
    if (s?.kind === 'node') setFocus((f) => ({ key: s.key, n: (f?.n ?? 0) + 1 }));
  };
  const marks = diff.data ? diffMarks(diff.data) : null;
  return (
    <div className="diff-view" data-testid="diff-view">
      <div className="diff-bar">
        <strong>
          Comparing v{from} with v{to}
        </strong>
        <button type="button" className="btn btn-sm" onClick={onClose}>
          Close the diff
        </button>
      </div>
      {older.isPending || newer.isPending || diff.isPending ? <Loading label="Reading the two versions" /> : null}
      <RefusalNote error={older.error ?? newer.error ?? diff.error} title="Could not compare the versions" />
      {older.data && newer.data && diff.data && marks ? (
        <div className="diff-body">
          <Side key={`from-${from}`} title={`v${from} (before)`} graph={older.data.graph} marks={marks.from} selection={selection} select={setSelection} focus={focus} />
          <Side key={`to-${to}`} title={`v${to} (after)`} graph={newer.data.graph} marks={marks.to} selection={selection} select={setSelection} focus={focus} />
          <ChangeList diff={diff.data} select={pick} />
        </div>
      ) : null}
    </div>
  );
}
