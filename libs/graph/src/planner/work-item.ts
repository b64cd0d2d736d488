/**
 * The lane job of a node (a {@link WorkItem}), built in one place: when the planner queues
 * an attempt, and when the dispatcher's in-flight check puts work Redis lost back on its
 * lane under the SAME invocation id (ARCHITECTURE principle 1). Both read the committed
 * row, so a rebuilt job is the job the planner queued.
 */
import { LANE_OF_KIND, type GraphKind, type GraphNode, type InputDocument } from '../model';
import type { AgentResume, NodeRunState, RunSnapshot, WorkItem } from './types';

/** The applied steering messages of a row, oldest first (by `atUtc`; equal times keep row order). */
export function appliedSteering(row: Pick<NodeRunState, 'steering'>): string[] {
  return row.steering
    .filter((s) => s.applied)
    .sort((a, b) => a.atUtc - b.atUtc)
    .map((s) => s.message);
}

/**
 * The WorkItem of a lane node's current attempt, from its row: the invocation, attempt,
 * input document (an operator's input edit replacing its `input` member) and deadline the
 * row holds. Null when the node has no lane or the row holds no invocation or input.
 * @param fallbackDeadlineAt the deadline of a row that holds none
 */
export function workItemOf(runId: string, spec: GraphNode, row: NodeRunState, fallbackDeadlineAt: number, graphKind: GraphKind): WorkItem | null {
  const lane = LANE_OF_KIND[row.kind];
  if (!lane || !row.invocationId || !row.input) return null;
  const input: InputDocument = row.inputOverride
    ? { ...row.input, input: row.inputOverride.input as InputDocument['input'] }
    : row.input;
  return {
    lane,
    runId,
    nodeKey: row.nodeKey,
    kind: row.kind,
    invocationId: row.invocationId,
    attempt: row.attempt,
    config: spec.config,
    input,
    deadlineAt: row.deadlineAt ?? fallbackDeadlineAt,
    steering: appliedSteering(row),
    outputSchema: spec.outputSchema,
    ...(graphKind === 'Chat' ? { chat: true as const } : {}),
    ...(row.kind === 'Agent' ? { agent: agentResume(spec, row) } : {}),
  };
}

/**
 * An Agent's resume point. Its generation is the first attempt of its current life: a row
 * starts with `attemptLimit` = maxAttempts, and only an operator's retry raises the limit by
 * maxAttempts past the attempt it failed on, so the life began `maxAttempts` below the limit.
 * A decision is carried while it is the row's (recorded and applied by the planner); the
 * next park clears it.
 */
export function agentResume(spec: Pick<GraphNode, 'maxAttempts'>, row: Pick<NodeRunState, 'attemptLimit' | 'decision'>): AgentResume {
  const generation = Math.max(1, row.attemptLimit - spec.maxAttempts + 1);
  const d = row.decision;
  if (!d || !d.applied || (d.decision !== 'Approve' && d.decision !== 'Reject')) return { generation };
  return { generation, decision: { operationId: d.operationId, decision: d.decision, comment: d.comment, payload: d.payload ?? null } };
}

/**
 * The job of an in-flight (Queued/Running) lane node of a committed snapshot, to enqueue
 * again after Redis lost it; null when the row holds no lane work. A row without a
 * deadline gets `now` plus its node's timeout (`defaultTimeoutMs` when it sets none).
 */
export function inflightWorkItem(snapshot: RunSnapshot, nodeKey: string, defaultTimeoutMs: number, now: number): WorkItem | null {
  const row = snapshot.nodes.find((n) => n.nodeKey === nodeKey);
  const spec = snapshot.graph.nodes.find((n) => n.key === nodeKey);
  if (!row || !spec) return null;
  if (row.status !== 'Queued' && row.status !== 'Running') return null;
  const timeoutMs = spec.timeoutSeconds != null ? spec.timeoutSeconds * 1000 : defaultTimeoutMs;
  return workItemOf(snapshot.run.id, spec, row, now + timeoutMs, snapshot.graph.kind);
}
