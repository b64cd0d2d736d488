/**
 * The idempotency key a tool is handed (ToolContext.idempotencyKey): `<runId>:<nodeKey>`.
 * It names the node's effect, not one attempt of it, so it is the same on every retry, on a
 * replay after a worker died mid-call, and on an operator's retry: a tool with side effects
 * (a payment) passes it to the system it calls and that system answers a repeat with the
 * first result instead of acting twice. The attempt number alone cannot serve: it changes
 * on each retry, which is exactly when a dedupe is needed.
 *
 * An Agent may call tools several times in one attempt; those are distinct effects, so each
 * call's key adds its 1-based position in the attempt (`<runId>:<nodeKey>:<n>`). A retried
 * Agent that repeats the same calls in the same order reuses the same keys.
 */
export function toolIdempotencyKey(runId: string, nodeKey: string, agentCall?: number): string {
  return agentCall === undefined ? `${runId}:${nodeKey}` : `${runId}:${nodeKey}:${agentCall}`;
}
