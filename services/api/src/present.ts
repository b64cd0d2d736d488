/**
 * Row → resource mapping (CONTRACT §8 exact shapes). Timestamps are ISO 8601 UTC.
 */
import type { DefinitionListRow, DefinitionRow, DefinitionVersionRow, DefinitionVersionSummaryRow, NodeRunDetailRow, NodeRunSummaryRow, RunSummaryRow } from '@flowline/db';
import { KEY_PATTERN, parseTimestamp, unstorableText } from '@flowline/graph';
import { NotFoundError, ValidationFailedError } from './errors';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lower-cased id, or 404 when it cannot be an id (checked before any query). */
export function requireUuid(id: string, what: string): string {
  if (!UUID_RE.test(id)) throw new NotFoundError(what);
  return id.toLowerCase();
}

/** The node or edge key of a path, or 404 when it cannot be a key (CONTRACT §1.1 charset; checked before any query). */
export function requireKey(key: string, what: 'node' | 'edge'): string {
  if (!KEY_PATTERN.test(key)) throw new NotFoundError(what);
  return key;
}

/** True when a client-chosen id can be stored (no U+0000, no lone surrogate). */
export function isStorableId(id: string): boolean {
  return unstorableText(id) === null;
}

export function isUuid(id: string): boolean {
  return UUID_RE.test(id);
}

/** `limit` default 50, clamped to 1..200. */
/** A list's page size when the request names none. */
export const DEFAULT_PAGE_LIMIT = 50;
/** The largest page a list answers (a larger `limit` is clamped to it). */
export const MAX_PAGE_LIMIT = 200;

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  return Math.min(MAX_PAGE_LIMIT, Math.max(1, limit));
}

/** An ISO 8601 instant of the request (epoch ms), or 400 naming `key`. */
export function requireInstant(text: string, key: string): number {
  const t = parseTimestamp(text);
  if ('error' in t) throw new ValidationFailedError(`invalid ${key}`, [{ key, message: `${key} ${t.error}` }]);
  return t.at;
}

/** A decoded cursor or 400. */
export function requireCursor<T>(cursor: string | undefined, decode: (s: string) => T | null): T | null {
  if (cursor === undefined || cursor === '') return null;
  const d = decode(cursor);
  if (d === null) throw new ValidationFailedError('cursor is malformed', [{ key: 'cursor', message: 'malformed cursor' }]);
  return d;
}

export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** Epoch ms (as stored in documents) → ISO; passes strings through. */
function isoOf(v: unknown): string | null {
  if (typeof v === 'number') return new Date(v).toISOString();
  if (typeof v === 'string') return v;
  return null;
}

export function definitionSummary(r: DefinitionListRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    kind: r.kind,
    version: r.version,
    nodeCount: r.nodeCount,
    graphHash: r.graphHash,
    enabled: r.enabled,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function definition(r: DefinitionRow) {
  return { ...definitionSummary(r), graph: r.graph };
}

export function definitionVersionSummary(r: DefinitionVersionSummaryRow) {
  return {
    definitionId: r.definitionId,
    version: r.version,
    name: r.name,
    description: r.description,
    kind: r.kind,
    nodeCount: r.nodeCount,
    graphHash: r.graphHash,
    createdAt: r.createdAt.toISOString(),
  };
}

export function definitionVersion(r: DefinitionVersionRow) {
  return { ...definitionVersionSummary(r), graph: r.graph };
}

export function runSummary(r: RunSummaryRow) {
  return {
    id: r.id,
    definitionId: r.definitionId,
    definitionVersion: r.definitionVersion,
    status: r.status,
    failureClass: r.failureClass,
    reason: r.reason,
    paused: r.paused,
    requestId: r.requestId,
    parentRunId: r.parentRunId,
    conversationId: r.conversationId,
    createdAt: r.createdAt.toISOString(),
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    graphHash: r.graphHash,
    lastSeq: r.lastSeq,
    forkedFrom: r.forkedFrom,
    metadata: r.metadata,
    budget: r.budget,
    usage: r.usage,
    priority: r.priority,
    notBefore: iso(r.notBefore),
    scheduleId: r.scheduleId,
  };
}

/** What a node run's summary and its detail both open with. */
function nodeRunHead({ nodeKey, kind, status, attempt, failureClass, reason, pendingDecisionKind }: NodeRunSummaryRow) {
  return { nodeKey, kind, status, attempt, failureClass, reason, pendingDecisionKind };
}

export function nodeRunSummary(r: NodeRunSummaryRow) {
  return {
    ...nodeRunHead(r),
    childRunId: r.childRunId,
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    reusedFrom: r.reusedFrom,
  };
}

/** Node run detail: the input document shows an operator input override in place. */
export function nodeRunDetail(r: NodeRunDetailRow) {
  let input = r.input;
  const override = r.inputOverride as { input?: unknown } | null;
  if (override && typeof input === 'object' && input !== null && 'input' in override) {
    input = { ...(input as Record<string, unknown>), input: override.input };
  }
  const steering = Array.isArray(r.steering) ? (r.steering as Array<Record<string, unknown>>) : [];
  return {
    ...nodeRunHead(r),
    input: input ?? null,
    output: r.output ?? null,
    error: r.failureClass === 'None' ? null : { class: r.failureClass, reason: r.reason },
    steering: steering.map((s) => ({
      operationId: String(s.operationId ?? ''),
      message: String(s.message ?? ''),
      atUtc: isoOf(s.atUtc),
      attempt: typeof s.attempt === 'number' ? s.attempt : 0,
      applied: s.applied === true,
    })),
    childRunId: r.childRunId,
    notBefore: iso(r.notBefore),
    reusedFrom: r.reusedFrom,
  };
}
