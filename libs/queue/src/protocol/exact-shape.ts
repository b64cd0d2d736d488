/**
 * Hand-written shape checks of the two messages every hop reads: the job payload (a work item,
 * read by the lane worker) and the worker's report on the wake channel (read by the run's
 * dispatcher). Zod's recursive JSON schema cost more CPU per hop than the rest of either
 * reader's own code, so each reader first asks these checks, and only a value
 * they do not accept goes through the zod schema of schemas.ts (which then accepts it with
 * its own normalisation, or says what is wrong).
 *
 * Each check is never looser than its zod schema, so the fast path accepts only what zod
 * would accept, and returns it as zod would: it requires exactly the schema's members (zod
 * strips unknown ones, so a value with extra members goes to zod), plain objects, finite
 * numbers, safe integers where zod wants an integer, and in a work item's `input` only the
 * forms zod would return unchanged. schemas.test.ts checks fast path and zod agree.
 */
import { FAILURE_CLASSES, JsonNumber, NODE_KINDS, type WorkItem } from '@flowline/graph';
import type { WakeMessage, WorkReturn } from './schemas';

const nodeKinds: ReadonlySet<unknown> = new Set(NODE_KINDS);
const failureClasses: ReadonlySet<unknown> = new Set(FAILURE_CLASSES);
const envelopeStatuses: ReadonlySet<unknown> = new Set(['succeeded', 'failed', 'skipped']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** True when `v` has exactly the members `required` plus any of `optional` (no others). */
function hasMembers(v: Record<string, unknown>, required: readonly string[], optional: readonly string[] = []): boolean {
  let n = 0;
  for (const k in v) {
    if (!Object.prototype.hasOwnProperty.call(v, k)) return false;
    if (required.includes(k)) n++;
    else if (!optional.includes(k) || v[k] === undefined) return false;
  }
  return n === required.length;
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 200;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** Any JSON value (exact numbers included), to a depth zod would also walk without trouble. */
export function isJson(v: unknown, depth = 0): boolean {
  if (depth > 200) return false;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null || v instanceof JsonNumber) return true;
      if (Array.isArray(v)) {
        for (const x of v) if (!isJson(x, depth + 1)) return false;
        return true;
      }
      if (!isPlainObject(v)) return false;
      for (const k in v) if (!Object.prototype.hasOwnProperty.call(v, k) || !isJson(v[k], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

const isJsonObject = (v: unknown): boolean => isPlainObject(v) && isJson(v);

/** An output envelope with exactly its members. */
function isEnvelope(v: unknown): boolean {
  if (!isPlainObject(v) || !hasMembers(v, ['status', 'attempt', 'branch', 'output'], ['error', 'state'])) return false;
  if (!envelopeStatuses.has(v.status) || !isInt(v.attempt) || v.attempt < 0) return false;
  if (v.branch !== null && typeof v.branch !== 'string') return false;
  if (!isJson(v.output)) return false;
  if (v.state !== undefined && !isJsonObject(v.state)) return false;
  if (v.error === undefined) return true;
  const e = v.error;
  return isPlainObject(e) && hasMembers(e, ['class', 'reason']) && failureClasses.has(e.class) && typeof e.reason === 'string';
}

function isEnvelopeMap(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  for (const k in v) if (!isEnvelope(v[k])) return false;
  return true;
}

/**
 * A node input zod returns unchanged: null, an envelope, a map of envelopes, or JSON that is
 * not an object (an object that is neither might be read as an envelope with members stripped).
 */
function isInput(v: unknown): boolean {
  if (v === null) return true;
  if (isPlainObject(v)) return isEnvelope(v) || isEnvelopeMap(v);
  return isJson(v);
}

function isInputDocument(v: unknown): boolean {
  if (!isPlainObject(v) || !hasMembers(v, ['run', 'upstream', 'input'], ['state'])) return false;
  if (v.state !== undefined && !isJsonObject(v.state)) return false;
  const run = v.run;
  if (!isPlainObject(run) || !hasMembers(run, ['input']) || !isJson(run.input)) return false;
  return isEnvelopeMap(v.upstream) && isInput(v.input);
}

const WORK_ITEM_MEMBERS = ['lane', 'runId', 'nodeKey', 'kind', 'invocationId', 'attempt', 'config', 'input', 'deadlineAt', 'steering', 'outputSchema'] as const;

/** True when zod's work item schema would return `v` as it is. */
export function isExactWorkItem(v: unknown): v is WorkItem {
  // an Agent's `agent` member goes through zod (hasMembers refuses a member it does not list)
  if (!isPlainObject(v) || !hasMembers(v, WORK_ITEM_MEMBERS, ['chat'])) return false;
  if (v.chat !== undefined && v.chat !== true) return false;
  if (v.lane !== 'llm' && v.lane !== 'tool') return false;
  if (!isId(v.runId) || !isId(v.nodeKey) || !isId(v.invocationId) || !nodeKinds.has(v.kind)) return false;
  if (!isInt(v.attempt) || v.attempt < 1 || !isInt(v.deadlineAt)) return false;
  if (!Array.isArray(v.steering) || !v.steering.every((s) => typeof s === 'string')) return false;
  if (v.outputSchema !== null && !isJsonObject(v.outputSchema)) return false;
  return isJsonObject(v.config) && isInputDocument(v.input);
}

function isOutcome(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  if (v.startedAt !== null && !isNumber(v.startedAt)) return false;
  if (!isNumber(v.finishedAt)) return false;
  // a usage member (a resumed Agent) or a park goes through zod: neither is on the hot path
  if (v.ok === true) return hasMembers(v, ['ok', 'output', 'startedAt', 'finishedAt']) && isJson(v.output);
  if (v.ok === false)
    return hasMembers(v, ['ok', 'failureClass', 'reason', 'startedAt', 'finishedAt']) && failureClasses.has(v.failureClass) && typeof v.reason === 'string';
  return false;
}

/** True when zod's work return schema would return `v` as it is. */
export function isExactWorkReturn(v: unknown): v is WorkReturn {
  return isPlainObject(v) && hasMembers(v, ['runId', 'nodeKey', 'invocationId', 'outcome']) && isId(v.runId) && isId(v.nodeKey) && isId(v.invocationId) && isOutcome(v.outcome);
}

/**
 * A wake message whose report (`ret`, already read from its wire form) zod would return as it
 * is: the message with exactly its members, naming its run or a failed job.
 */
export function isExactWakeMessage(v: unknown): v is WakeMessage {
  if (!isPlainObject(v) || !hasMembers(v, [], ['runId', 'tenantId', 'ret', 'started', 'failed'])) return false;
  if (v.runId !== undefined && !isId(v.runId)) return false;
  if (v.tenantId !== undefined && !isId(v.tenantId)) return false;
  if (v.ret !== undefined && !isExactWorkReturn(v.ret)) return false;
  const s = v.started;
  if (s !== undefined && !(isPlainObject(s) && hasMembers(s, ['invocationId', 'nodeKey', 'at']) && isId(s.invocationId) && typeof s.nodeKey === 'string' && s.nodeKey.length >= 1 && isNumber(s.at)))
    return false;
  const f = v.failed;
  if (f !== undefined && !(isPlainObject(f) && hasMembers(f, ['invocationId', 'reason', 'at']) && isId(f.invocationId) && typeof f.reason === 'string' && isNumber(f.at)))
    return false;
  return v.runId !== undefined || v.failed !== undefined;
}
