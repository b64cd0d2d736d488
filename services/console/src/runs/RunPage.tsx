/**
 * The run view (`/run?runId&nodeKey&edgeKey&tab`): the graph the run PINNED with each
 * node's live status, a notice when the definition changed since, the node table, the
 * events and the output; the selected node's panel on the right. Kept current by the live
 * channel (live/use-run-live.ts), polling every 3 s while it is down.
 */
import { useCallback, useMemo } from 'react';
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { NodeRunSummary, RunDetail } from '@flowline/client';
import { useDefinition, useDefinitionIndex, useDefinitionIndexState, useRunControls, useRunDetail } from '../api/queries';
import type { RunTab } from '../app/search';
import { graphToCanvas } from '../graph/canvas';
import { RunGraph } from '../graph/RunGraph';
import { useRunLive } from '../live/use-run-live';
import { StatusBadge, TERMINAL_RUN_STATUSES, shownNodeStatus } from '../ui/status';
import { EmptyState, Loading, RefusalNote, ShortId, Time, durationText, useNow } from '../ui/primitives';
import { JsonDoc } from '../ui/JsonDoc';
import { BlockersTab } from './BlockersTab';
import { decisionKindText } from './blockers';
import { EventsTab } from './EventsTab';
import { StateTab } from './StateTab';
import { NodePanel } from './NodePanel';
import { NodeTable } from './NodeTable';
import { RunActions } from './RunActions';
import { RunFacts } from './RunFacts';
import { EdgePanel } from './EdgePanel';
import { TimelineTab } from './TimelineTab';
import { SignalButton, declaredChannels } from './SignalForm';

const route = getRouteApi('/run');

const TABS: Array<{ id: RunTab; label: string }> = [
  { id: 'nodes', label: 'Nodes' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'blockers', label: 'Waiting on' },
  { id: 'events', label: 'Events' },
  { id: 'state', label: 'State' },
  { id: 'output', label: 'Output' },
];

/** `maxAttempts` of a node in the pinned document, when it sets one. */
function maxAttemptsOf(graph: unknown, key: string): number | undefined {
  const n = ((graph as { nodes?: unknown[] })?.nodes ?? []).find((x) => (x as { key?: unknown }).key === key) as { maxAttempts?: unknown } | undefined;
  return typeof n?.maxAttempts === 'number' ? n.maxAttempts : undefined;
}

/** A node run as an ended run shows it, the same object while its node run is the same (see RunPage). */
const endedViews = new WeakMap<NodeRunSummary, NodeRunSummary>();
function shownAsEnded(n: NodeRunSummary): NodeRunSummary {
  const status = shownNodeStatus(n.status, true) as NodeRunSummary['status'];
  if (status === n.status) return n;
  let shown = endedViews.get(n);
  if (!shown) endedViews.set(n, (shown = { ...n, status }));
  return shown;
}

function DefinitionNotice({ detail }: { detail: RunDetail }) {
  // the definitions index the page reads anyway names the current version and hash; the
  // definition itself is read only when the index, once read, does not hold it
  const { index, settled } = useDefinitionIndexState();
  const listed = index.get(detail.run.definitionId);
  const def = useDefinition(settled && !listed ? detail.run.definitionId : undefined);
  const current = listed ?? def.data;
  if (!current || current.graphHash === detail.run.graphHash) return null;
  return (
    <div className="notice" role="note" data-testid="definition-changed">
      The definition <strong>{current.name}</strong> has changed since this run started (now v{current.version}). This
      view draws the graph the run pinned, which is the one it runs on.
    </div>
  );
}

function WaitingCallout({ runId, waiting }: { runId: string; waiting: NodeRunSummary[] }) {
  if (waiting.length === 0) return null;
  return (
    <div className="notice notice-warn" role="status">
      Waiting on a person:{' '}
      {waiting.map((n, i) => (
        <span key={n.nodeKey}>
          {i > 0 ? ', ' : ''}
          <Link to="/run" search={{ runId, nodeKey: n.nodeKey }}>
            {n.nodeKey}
          </Link>{' '}
          ({decisionKindText(n.pendingDecisionKind)})
        </span>
      ))}
    </div>
  );
}

export function RunPage() {
  const search = route.useSearch();
  const { runId, nodeKey, edgeKey } = search;
  const tab: RunTab = search.tab ?? 'nodes';
  const navigate = useNavigate({ from: '/run' });
  const live = useRunLive(runId);
  const run = useRunDetail(runId, live.pollMs);
  const defs = useDefinitionIndex();
  const select = useCallback(
    (patch: { nodeKey?: string | undefined; edgeKey?: string | undefined; tab?: RunTab; stateSeq?: number | undefined; pane?: 'timeline' | undefined }) => void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: false }),
    [navigate],
  );
  const selectNode = useCallback((k: string | undefined) => select({ nodeKey: k, edgeKey: undefined }), [select]);
  const selectEdge = useCallback((k: string | undefined) => select({ edgeKey: k, nodeKey: undefined }), [select]);
  const graph = run.data?.graph;
  const labels = useMemo(() => new Map(graph === undefined ? [] : graphToCanvas(graph).doc.nodes.map((n) => [n.key, n.label])), [graph]);
  const controls = useRunControls(runId, live.pollMs);
  // an ended run's never-reached nodes read "Not run", not "Pending" (nothing will run them);
  // one array per read of the run, so the table's rows and the graph's nodes (memoised on
  // their node run) re-render only when a node changes, not on every render of the page
  const nodeRuns = run.data?.nodeRuns;
  const ended = !!run.data && TERMINAL_RUN_STATUSES.has(run.data.run.status);
  const shownRuns = useMemo(() => (nodeRuns && ended ? nodeRuns.map(shownAsEnded) : nodeRuns), [nodeRuns, ended]);
  // a run that can still change ticks: its duration and its running nodes' durations move each second
  const clock = useNow(!!run.data && !TERMINAL_RUN_STATUSES.has(run.data.run.status));

  if (!runId) {
    return (
      <div className="page">
        <EmptyState title="No run selected">
          <Link to="/runs">Pick one from the runs list.</Link>
        </EmptyState>
      </div>
    );
  }
  const detail = run.data;
  const now = Math.max(run.dataUpdatedAt || 0, clock);
  const selectedRun = detail?.nodeRuns.find((n) => n.nodeKey === nodeKey);
  const docNode = detail && nodeKey ? graphToCanvas(detail.graph).byKey.get(nodeKey) : undefined;
  const edge = detail && edgeKey ? graphToCanvas(detail.graph).doc.edges.find((e) => e.key === edgeKey) : undefined;
  const runLive = !!detail && !TERMINAL_RUN_STATUSES.has(detail.run.status) && detail.run.status !== 'Cancelling';
  const waiting = detail?.nodeRuns.filter((n) => n.status === 'WaitingForApproval' || n.pendingDecisionKind === 'Operator') ?? [];

  return (
    <div className="page page-wide run-page">
      <RefusalNote error={run.error} title="Could not read the run" />
      {run.isPending ? <Loading label="Reading the run" /> : null}
      {detail ? (
        <>
          <div className="page-head">
            <div>
              <div className="crumbs small">
                <Link to="/runs">Runs</Link> <span aria-hidden="true">/</span> <span className="mono">{runId.slice(0, 8)}</span>
              </div>
              <h1 className="run-title">
                <span>Run</span> <ShortId id={runId} /> <StatusBadge status={detail.run.status} />
                {detail.run.paused ? <span className="chip chip-warn">paused</span> : null}
              </h1>
              <p className="muted run-meta">
                <Link to="/runs" search={{ definitionId: detail.run.definitionId }}>
                  {defs.get(detail.run.definitionId)?.name ?? `definition ${detail.run.definitionId.slice(0, 8)}`}
                </Link>{' '}
                <Link to="/editor" search={{ definitionId: detail.run.definitionId, version: detail.run.definitionVersion }} title="The definition version this run pinned, read-only in the editor">
                  v{detail.run.definitionVersion}
                </Link>{' '}
                · created <Time iso={detail.run.createdAt} now={now} /> · {durationText(detail.run.startedAt, detail.run.finishedAt, now)}
                {detail.run.conversationId ? <> · conversation <span className="mono">{detail.run.conversationId}</span></> : null}
                {detail.run.notBefore ? (
                  <span data-not-before={detail.run.notBefore}>
                    {' '}
                    · {detail.run.status === 'Scheduled' ? 'starts' : 'was due'} <Time iso={detail.run.notBefore} now={now} />
                  </span>
                ) : null}
                {detail.run.scheduleId ? (
                  <>
                    {' '}
                    · started by schedule <Link to="/schedules">{detail.run.scheduleId.slice(0, 8)}</Link>
                  </>
                ) : null}
                {detail.run.forkedFrom ? (
                  <>
                    {' '}
                    · forked from{' '}
                    <Link to="/run" search={{ runId: detail.run.forkedFrom.runId, nodeKey: detail.run.forkedFrom.nodeKey }} data-forked-from={detail.run.forkedFrom.runId}>
                      <span className="mono">{detail.run.forkedFrom.runId.slice(0, 8)}</span> at <span className="mono">{detail.run.forkedFrom.nodeKey}</span>
                    </Link>
                  </>
                ) : null}
                {detail.run.failureClass !== 'None' || detail.run.reason ? (
                  <>
                    {' '}
                    · {detail.run.failureClass !== 'None' ? <span className="failure">{detail.run.failureClass}</span> : null}{' '}
                    <span className="run-reason">{detail.run.reason}</span>
                  </>
                ) : null}
              </p>
              <RunFacts run={detail.run} />
            </div>
            <div className="run-head-right" data-live-mode={live.mode}>
              <button
                type="button"
                className="btn btn-sm"
                aria-pressed={search.pane === 'timeline'}
                title="The timeline and the events in a pane beside the graph (drag the graph's corner to resize)"
                onClick={() => select({ pane: search.pane === 'timeline' ? undefined : 'timeline' })}
              >
                Timeline beside the graph
              </button>
              <RunActions run={detail.run} />
              {runLive && declaredChannels(detail.graph).length > 0 ? <SignalButton runId={runId} graph={detail.graph} /> : null}
              {/* the header already says Live; only a run that is not followed live says so */}
              {live.mode === 'polling' && runLive ? (
                <span className="live-badge polling" role="status">
                  Polling every 3 s
                </span>
              ) : null}
            </div>
          </div>
          <RefusalNote error={live.refusal} title="Live updates refused; polling instead" />
          <DefinitionNotice detail={detail} />
          <WaitingCallout runId={runId} waiting={waiting} />
          <div className={`card graph-card${search.pane === 'timeline' ? ' graph-split' : ''}`}>
            <div className="graph-pane">
              {/* drawn again when the pane opens or closes (the graph fits the width it is given) and
                  when a migration pins another graph */}
              <RunGraph
                key={`${detail.run.graphHash}:${search.pane ?? 'full'}`}
                graph={detail.graph}
                nodeRuns={shownRuns ?? detail.nodeRuns}
                nodeKey={nodeKey}
                edgeKey={edgeKey}
                onSelectNode={selectNode}
                onSelectEdge={selectEdge}
              />
            </div>
            {search.pane === 'timeline' ? (
              <section className="timeline-pane" aria-label="Timeline beside the graph">
                <h2 className="pane-title">Timeline</h2>
                <TimelineTab runId={runId} pollMs={live.pollMs} labels={labels} now={now} onSelect={selectNode} />
                <h2 className="pane-title">Events</h2>
                <EventsTab runId={runId} pollMs={live.pollMs} />
              </section>
            ) : null}
          </div>
          <div className={`run-body${nodeKey || edge ? ' with-panel' : ''}`}>
            <div className="run-main">
              <div className="card tabs-card">
                <div className="tabs" role="tablist" aria-label="Run details">
                  {TABS.map((t) => (
                    <button
                      key={t.id}
                      type="button"
                      role="tab"
                      id={`tab-${t.id}`}
                      aria-selected={tab === t.id}
                      aria-controls={`panel-${t.id}`}
                      tabIndex={tab === t.id ? 0 : -1}
                      className={`tab${tab === t.id ? ' is-active' : ''}`}
                      onClick={() => select({ tab: t.id })}
                      onKeyDown={(e) => {
                        const i = TABS.findIndex((x) => x.id === tab);
                        const next = e.key === 'ArrowRight' ? TABS[(i + 1) % TABS.length] : e.key === 'ArrowLeft' ? TABS[(i + TABS.length - 1) % TABS.length] : undefined;
                        if (next) {
                          select({ tab: next.id });
                          document.getElementById(`tab-${next.id}`)?.focus();
                        }
                      }}
                    >
                      {t.label}
                      {t.id === 'nodes' ? <span className="tab-count">{detail.nodeRuns.length}</span> : null}
                    </button>
                  ))}
                </div>
                <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
                  {tab === 'nodes' ? <NodeTable nodeRuns={shownRuns ?? detail.nodeRuns} labels={labels} selected={nodeKey} now={now} onSelect={selectNode} /> : null}
                  {tab === 'timeline' ? <TimelineTab runId={runId} pollMs={live.pollMs} labels={labels} now={now} onSelect={selectNode} /> : null}
                  {tab === 'blockers' ? <BlockersTab runId={runId} pollMs={live.pollMs} now={now} onSelect={selectNode} /> : null}
                  {tab === 'events' ? <EventsTab runId={runId} pollMs={live.pollMs} /> : null}
                  {tab === 'state' ? (
                    <StateTab runId={runId} graph={detail.graph} pollMs={live.pollMs} seq={search.stateSeq} onPick={(stateSeq) => select({ stateSeq })} />
                  ) : null}
                  {tab === 'output' ? (
                    <div className="output-tab">
                      <JsonDoc title="Run output" value={detail.output} emptyText="no End has succeeded yet" />
                    </div>
                  ) : null}
                </div>
              </div>
            </div>
            {nodeKey ? (
              <NodePanel
                key={nodeKey}
                runId={runId}
                nodeKey={nodeKey}
                summary={selectedRun}
                docNode={docNode}
                maxAttempts={maxAttemptsOf(detail.graph, nodeKey)}
                pollMs={live.pollMs}
                now={now}
                onClose={() => select({ nodeKey: undefined })}
                controls={controls.data}
                runLive={runLive}
                onForked={(forked) => void navigate({ search: { runId: forked } })}
                graph={detail.graph}
              />
            ) : null}
            {edge && !nodeKey ? (
              <EdgePanel key={edge.key} runId={runId} edge={edge} controls={controls.data} runLive={runLive} onClose={() => select({ edgeKey: undefined })} />
            ) : null}
          </div>
        </>
      ) : null}
    </div>
  );
}

