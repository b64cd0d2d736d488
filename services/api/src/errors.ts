/**
 * Typed API errors: each class has a stable `code` and an HTTP status; `app.onError`
 * (see {@link errorResponse}) is the one place that turns them into
 * `{ error: { code, message, details? } }`.
 */
import { HTTPException } from 'hono/http-exception';
import { EncryptedValueError, PoolTimeoutError, SavedAgentsMissingError } from '@flowline/db';
import type { Issue } from '@flowline/graph';

/** Base of every error the API answers with on purpose. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503,
    readonly code: string,
    message: string,
    readonly details?: unknown[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string) {
    super(404, 'NotFound', `${what} not found`);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'missing or unknown API key') {
    super(401, 'Unauthorized', message);
  }
}

/** A managed key used outside its constraints (its definitions, its client networks). */
export class KeyConstraintError extends ApiError {
  constructor(message: string) {
    super(403, 'KeyConstraint', message);
  }
}

/** A key asked to mint (or rotate) a key holding more than itself. */
export class ScopeEscalationError extends ApiError {
  constructor(message: string) {
    super(403, 'ScopeEscalation', message);
  }
}

/** A bad body, query or parameter; details are `{ key, message }` per offending member. */
export class ValidationFailedError extends ApiError {
  constructor(message: string, details: Issue[] = []) {
    super(400, 'ValidationFailed', message, details);
  }
}

export class MalformedJsonError extends ApiError {
  constructor() {
    super(400, 'MalformedJson', 'request body is not valid JSON');
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super(413, 'PayloadTooLarge', `request body exceeds ${limitBytes} bytes`);
  }
}

/** The graph document failed validation; `warnings` travel beside the error. */
export class GraphInvalidError extends ApiError {
  constructor(
    readonly errors: Issue[],
    readonly warnings: Issue[],
  ) {
    super(400, 'GraphInvalid', `graph is invalid (${errors.length} error${errors.length === 1 ? '' : 's'})`, errors);
  }
}

export class RunInputInvalidError extends ApiError {
  constructor(message: string, details: Issue[]) {
    super(400, 'InputInvalid', message, details);
  }
}

/** A start request's `budget` is not a budget; details are `{ key: 'budget.<member>', message }` per problem. */
export class BudgetInvalidError extends ApiError {
  constructor(details: Issue[]) {
    super(400, 'BudgetInvalid', `budget is invalid: ${details.map((d) => d.message).join('; ')}`, details);
  }
}

export class InputTooLargeError extends ApiError {
  constructor(bytes: number, limit: number) {
    super(400, 'InputTooLarge', `run input is ${bytes} bytes, over MAX_RUN_INPUT_BYTES (${limit})`);
  }
}

export class VersionConflictError extends ApiError {
  constructor(expected: number) {
    super(409, 'VersionConflict', `definition is not at version ${expected}`);
  }
}

/** A start of a disabled definition (POST /v1/definitions/{id}/disable); runs already started go on. */
export class DefinitionDisabledError extends ApiError {
  constructor() {
    super(409, 'DefinitionDisabled', 'this definition is disabled: enable it (POST /v1/definitions/{id}/enable) to start runs of it');
  }
}

export class DefinitionInUseError extends ApiError {
  constructor() {
    super(409, 'DefinitionInUse', 'a live run pins this definition');
  }
}

/** A retire of a version that live runs, schedules or aliases pin (details: the counts and alias names). */
export class VersionInUseError extends ApiError {
  constructor(pins: { liveRuns: number; schedules: number; aliases: string[] }) {
    super(409, 'VersionInUse', `the version is pinned: ${pins.liveRuns} live run(s), ${pins.schedules} schedule(s), ${pins.aliases.length} alias(es)`, [pins]);
  }
}

/** A retire of the definition's latest version (what a start without a version runs). */
export class VersionIsLatestError extends ApiError {
  constructor(latest: number) {
    super(409, 'VersionIsLatest', `version ${latest} is the definition's latest: save a new version first`, [{ latest }]);
  }
}

/** A delete of a definition that other definitions of the tenant name (Subworkflow, Loop). */
export class DefinitionReferencedError extends ApiError {
  constructor(referencedBy: Array<{ id: string; name: string }>) {
    super(
      409,
      'DefinitionReferenced',
      'other definitions name this one (Subworkflow, Map or Loop); change or delete them first',
      referencedBy.map((r) => ({ definitionId: r.id, name: r.name })),
    );
  }
}

export class RequestIdReusedError extends ApiError {
  constructor(runId: string) {
    super(409, 'RequestIdReused', 'requestId already started a run of another definition', [{ runId }]);
  }
}

export class GateAlreadyDecidedError extends ApiError {
  constructor(standing: unknown) {
    super(409, 'GateAlreadyDecided', 'the gate already has a decision', [standing]);
  }
}

/** 409: this principal has already decided this approval (each principal decides once). */
export class AlreadyDecidedError extends ApiError {
  constructor(message: string, standing: unknown) {
    super(409, 'AlreadyDecided', message, [standing]);
  }
}

/** 409: the approval's policy settled it (its timeout passed) before this decision; the gate closes at the next tick. */
export class ApprovalSettledError extends ApiError {
  constructor(message: string) {
    super(409, 'ApprovalSettled', message);
  }
}

/**
 * 403: the approval policy refuses this principal — a forbid rule (`initiator`,
 * `definitionAuthor`) or `notInQuorum`; the rule's name is the answer's `error.rule`.
 */
export class ApprovalForbiddenError extends ApiError {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(403, 'ApprovalForbidden', message, [{ rule }]);
  }
}

/** A decision the gate does not offer (Answer on a Pause, Approve on a ChatInput, …). */
export class DecisionNotAllowedError extends ApiError {
  constructor(message: string) {
    super(409, 'DecisionNotAllowed', message);
  }
}

export class NodeStateConflictError extends ApiError {
  constructor(message: string) {
    super(409, 'NodeStateConflict', message);
  }
}

/**
 * A refusal the client should retry later (429, 503): `app.onError` answers it with a
 * `Retry-After` header of {@link retryAfterSeconds}.
 */
export class RetryLaterError extends ApiError {
  constructor(
    status: 429 | 503,
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
    details?: unknown[],
  ) {
    super(status, code, message, details);
  }
}

/** A start past the tenant's MAX_PENDING_RUNS; answered with `Retry-After`. */
export class BacklogFullError extends RetryLaterError {
  constructor(limit: number, retryAfterSeconds: number) {
    super(429, 'BacklogFull', `the tenant already has ${limit} Pending runs (MAX_PENDING_RUNS); retry after ${retryAfterSeconds} s`, retryAfterSeconds, [{ limit }]);
  }
}

/**
 * 429: the tenant already has as many requests (or body bytes) in flight on this API replica
 * as its bound allows; `details` names the bound's option and its value.
 */
export class TooManyInFlightError extends RetryLaterError {
  constructor(what: string, bound: string, limit: number, retryAfterSeconds: number) {
    super(
      429,
      'TooManyInFlight',
      `the tenant's ${what} in flight on this API replica are at their bound (${bound} = ${limit}); retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
      [{ bound, limit }],
    );
  }
}

/**
 * 503: this API replica is saturated — every tenant's requests (or body bytes) in flight reach
 * its bound, or no database connection came free within its acquire timeout. Another
 * replica, or this one a moment later, serves the request; `details` names the bound.
 */
export class OverloadedError extends RetryLaterError {
  constructor(reason: string, bound: string, limit: number, retryAfterSeconds: number) {
    super(503, 'Overloaded', `this API replica is overloaded: ${reason} (${bound} = ${limit}); retry after ${retryAfterSeconds} s`, retryAfterSeconds, [
      { bound, limit },
    ]);
  }
}

export class NotReadyError extends ApiError {
  constructor(message: string) {
    super(503, 'NotReady', message);
  }
}

/**
 * `err` answered as 503 `Overloaded` when a database acquire timeout caused it (anywhere in
 * its `cause` chain: a store may wrap it); any other error as it is.
 */
export function overloadedByPool(err: unknown, retryAfterSeconds: number): unknown {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof PoolTimeoutError) {
      return new OverloadedError(`no database connection came free within ${e.timeoutMs} ms`, 'DATABASE_ACQUIRE_TIMEOUT_MS', e.timeoutMs, retryAfterSeconds);
    }
  }
  return err;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown[]; rule?: string };
  warnings?: Issue[];
}

/** Maps any thrown value to a status and body; unknown errors are 500 `Internal` without internals. */
export function errorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (err instanceof GraphInvalidError) {
    return {
      status: 400,
      body: { error: { code: err.code, message: err.message, details: err.errors }, warnings: err.warnings },
    };
  }
  if (err instanceof SavedAgentsMissingError) {
    // a run start of a graph whose saved agent (or version) was deleted since it was saved
    const details = err.missing.map((m) => ({
      key: m.nodeKey,
      message: m.version === null ? `unknown saved agent '${m.id}' (not found in this tenant)` : `saved agent '${m.id}' has no version ${m.version}`,
    }));
    return { status: 400, body: { error: { code: 'GraphInvalid', message: `graph is invalid (${details.length} error${details.length === 1 ? '' : 's'})`, details }, warnings: [] } };
  }
  if (err instanceof ApiError) {
    const error: ErrorBody['error'] = { code: err.code, message: err.message };
    if (err.details !== undefined) error.details = err.details;
    if (err instanceof ApprovalForbiddenError) error.rule = err.rule;
    return { status: err.status, body: { error } };
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const code =
      status === 413
        ? 'PayloadTooLarge'
        : status === 415
          ? 'UnsupportedMediaType'
          : status === 400
            ? 'MalformedJson'
            : status === 404
              ? 'NotFound'
              : 'HttpError';
    return { status, body: { error: { code, message: err.message || code } } };
  }
  if (err instanceof EncryptedValueError) {
    // names the table, column and row whose stored value does not decrypt; never its content
    return { status: 500, body: { error: { code: err.code, message: err.message, details: err.details } } };
  }
  return { status: 500, body: { error: { code: 'Internal', message: 'internal error' } } };
}

/** Run metadata that breaks a rule; details name each key: `{ key: 'metadata.<key>', message }`. */
export class MetadataInvalidError extends ApiError {
  constructor(details: Issue[]) {
    super(400, 'MetadataInvalid', `run metadata is invalid: ${details.map((d) => d.key).join(', ')}`, details);
  }
}

/** A bulk action whose filter matches more runs than MAX_BULK_RUNS. */
export class BulkTooLargeError extends ApiError {
  constructor(limit: number) {
    super(400, 'BulkTooLarge', `the filter matches more than MAX_BULK_RUNS (${limit}) runs the action applies to; narrow it`, [{ key: 'filter', message: `over ${limit} runs` }]);
  }
}
