/**
 * Operator acts carry an id chosen when the operator acts (not when the request is sent),
 * so a re-sent request is the same act: `operationId` / `requestId` in the body where the
 * contract has one, and the `Idempotency-Key` header on every act.
 */
export function newOperationId(): string {
  return crypto.randomUUID();
}
