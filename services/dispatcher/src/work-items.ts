/**
 * Rebuilds the job of an in-flight node from its committed row, so work lost with
 * Redis is enqueued again under the SAME invocation id (ARCHITECTURE principle 1).
 */
import { LANE_OF_KIND } from '@flowline/graph';
import type { InputDocument, RunSnapshot, WorkItem } from '@flowline/graph';

/** The WorkItem of a Queued/Running lane node, or null when the row holds no lane work. */
export function workItemFor(snapshot: RunSnapshot, nodeKey: string, defaultTimeoutMs: number, now: number): WorkItem | null {
  const node = snapshot.nodes.find((n) => n.nodeKey === nodeKey);
  const spec = snapshot.graph.nodes.find((n) => n.key === nodeKey);
  if (!node || !spec || !node.invocationId || !node.input) return null;
  if (node.status !== 'Queued' && node.status !== 'Running') return null;
  const lane = LANE_OF_KIND[node.kind];
  if (!lane) return null;
  const input: InputDocument = node.inputOverride
    ? { ...node.input, input: node.inputOverride.input as InputDocument['input'] }
    : node.input;
  const timeoutMs = spec.timeoutSeconds != null ? spec.timeoutSeconds * 1000 : defaultTimeoutMs;
  return {
    lane,
    runId: snapshot.run.id,
    nodeKey,
    kind: node.kind,
    invocationId: node.invocationId,
    attempt: node.attempt,
    config: spec.config,
    input,
    deadlineAt: node.deadlineAt ?? now + timeoutMs,
    steering: node.steering.filter((s) => s.applied).map((s) => s.message),
    outputSchema: spec.outputSchema,
  };
}
