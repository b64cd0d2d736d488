/**
 * The selected node: its kind and status, attempts and timings, the failure, its documents
 * read as what happened (NodeDocument: prompt, answer, decision, Agent steps, output), its
 * steering entries, a running LLM/Agent
 * node's live output, the decision panel while it waits on a person, and the operator's
 * node verbs.
 */
import type { NodeRunSummary, RunControls } from '@flowline/client';
import { useNodeDetail } from '../api/queries';
import type { DocNode } from '../definitions/graph-doc';
import { StatusBadge, shownNodeStatus } from '../ui/status';
import { KIND_GLYPH, STREAMING_KINDS, defaultMaxAttempts } from '../ui/kinds';
import { Loading, RefusalNote, SideHead, Time, durationText } from '../ui/primitives';
import { TokenStream } from './TokenStream';
import { DecisionPanel } from './DecisionPanel';
import { NodeDocument } from './NodeDocument';
import { WaitPanel } from './WaitPanel';
import { GateProgress } from './GateProgress';
import { NodeActions } from './NodeActions';

export interface NodePanelProps {
  runId: string;
  nodeKey: string;
  summary: NodeRunSummary | undefined;
  docNode: DocNode | undefined;
  maxAttempts: number | undefined;
  pollMs: number | false;
  now: number;
  onClose(): void;
  controls: RunControls | undefined;
  /** the run can still change (not finished, not cancelling) */
  runLive: boolean;
  /** a fork from this node started run `runId` */
  onForked?(runId: string): void;
  /** the run's pinned graph document (a Wait's signal form reads its declared channels) */
  graph?: unknown;
}

export function NodePanel({ runId, nodeKey, summary, docNode, maxAttempts, pollMs, now, onClose, controls, runLive, onForked, graph }: NodePanelProps) {
  const detail = useNodeDetail(runId, nodeKey, pollMs);
  const d = detail.data;
  const kind = summary?.kind ?? docNode?.kind ?? 'Unknown';
  const status = d?.status ?? summary?.status ?? 'Pending';
  const attempt = d?.attempt ?? summary?.attempt ?? 0;
  const limit = maxAttempts ?? defaultMaxAttempts(kind);
  return (
    <aside className="side-panel card" aria-label={`Node ${nodeKey}`} data-node-panel={nodeKey}>
      <SideHead closeLabel="Close the node panel" onClose={onClose}>
        <div className="muted small">
          <span aria-hidden="true">{KIND_GLYPH[kind] ?? '•'} </span>
          {kind}
        </div>
        <h2>{docNode?.label ?? nodeKey}</h2>
        {docNode && docNode.label !== nodeKey ? <div className="mono small muted">{nodeKey}</div> : null}
      </SideHead>
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={shownNodeStatus(status, !runLive)} />
          </dd>
        </div>
        <div>
          <dt>Attempt</dt>
          <dd>
            {/* only an operator's retry takes a node past its own limit */}
            {attempt <= limit ? `${attempt} of ${limit}` : `${attempt} (its limit ${limit}, retried by an operator)`}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <Time iso={summary?.startedAt ?? null} now={now} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{durationText(summary?.startedAt ?? null, summary?.finishedAt ?? null, now)}</dd>
        </div>
        {d?.notBefore ? (
          <div>
            <dt>Retry at</dt>
            <dd>
              <Time iso={d.notBefore} now={now} />
            </dd>
          </div>
        ) : null}
        {summary?.childRunId ? (
          <div>
            <dt>Child run</dt>
            <dd className="mono">{summary.childRunId.slice(0, 8)}</dd>
          </div>
        ) : null}
      </dl>
      {d && d.failureClass !== 'None' ? (
        <div className="notice notice-fail">
          <strong>{d.failureClass}</strong> {d.reason}
        </div>
      ) : null}
      {docNode && (status === 'WaitingForApproval' || (d?.pendingDecisionKind ?? summary?.pendingDecisionKind) === 'Operator') ? (
        <DecisionPanel
          runId={runId}
          docNode={docNode}
          pendingDecisionKind={d?.pendingDecisionKind ?? summary?.pendingDecisionKind ?? null}
          pendingToolCall={d?.pendingToolCall}
        />
      ) : null}
      {status === 'WaitingForApproval' ? <GateProgress gate={d} /> : null}
      {kind === 'Wait' && status === 'Running' && runLive ? <WaitPanel runId={runId} nodeKey={nodeKey} graph={graph} pollMs={pollMs} now={now} /> : null}
      <NodeActions
        runId={runId}
        nodeKey={nodeKey}
        kind={kind}
        status={status}
        pendingDecisionKind={d?.pendingDecisionKind ?? summary?.pendingDecisionKind ?? null}
        runLive={runLive}
        controls={controls}
        detail={d}
        {...(onForked ? { onForked } : {})}
      />
      {status === 'Running' && STREAMING_KINDS.has(kind) ? <TokenStream runId={runId} nodeKey={nodeKey} attempt={d?.attempt ?? summary?.attempt ?? 0} /> : null}
      <RefusalNote error={detail.error} title="Could not read the node" />
      {detail.isPending ? <Loading label="Reading the node" /> : null}
      {d ? (
        <>
          <NodeDocument runId={runId} kind={kind} docNode={docNode} d={d} />
          {d.steering.length > 0 ? (
            <section className="steering" aria-label="Steering">
              <h3>Steering</h3>
              <ol>
                {d.steering.map((s) => (
                  <li key={s.operationId}>
                    <span className={`chip ${s.applied ? 'chip-accent' : ''}`}>{s.applied ? `applied · attempt ${s.attempt}` : 'pending'}</span> {s.message}{' '}
                    <Time iso={s.atUtc} now={now} />
                  </li>
                ))}
              </ol>
            </section>
          ) : null}
        </>
      ) : null}
    </aside>
  );
}
