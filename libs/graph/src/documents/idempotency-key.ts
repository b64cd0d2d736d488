/**
 * The idempotency key a tool is handed (ToolContext.idempotencyKey): `<runId>:<nodeKey>`.
 * It names the node's effect, not one attempt of it, so it is the same on every retry, on a
 * replay after a worker died mid-call, and on an operator's retry: a tool with side effects
 * (a payment) passes it to the system it calls and that system answers a repeat with the
 * first result instead of acting twice. The attempt number alone cannot serve: it changes
 * on each retry, which is exactly when a dedupe is needed.
 *
 * An Agent may call tools several times; those are distinct effects, so each call's key adds
 * the transcript step that records it (`<runId>:<nodeKey>:<step>`). A resumed Agent does not
 * run a call its transcript already holds; a call cut short by a crash runs again with the
 * same key.
 */
export function toolIdempotencyKey(runId: string, nodeKey: string, agentCall?: number): string {
  return agentCall === undefined ? `${runId}:${nodeKey}` : `${runId}:${nodeKey}:${agentCall}`;
}
