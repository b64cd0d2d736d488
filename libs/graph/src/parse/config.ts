/**
 * Per-kind node config (CONTRACT §2): closed member lists, member types, required
 * members. `null` members are read as absent (even ones the kind does not read) and
 * dropped from the parsed config.
 */
import type { Json, JsonObject, NodeKind } from '../model';
import { checkSchema } from '../schema';
import { parseCondition } from './condition';
import { dotPathError, hasOwn, isObject, isPositiveInt, typeName } from './util';

/** Member check: an error fragment, or the (possibly normalised) value to keep. */
type Check = (v: unknown) => { error: string } | { value: Json };

const keep = (v: unknown) => ({ value: v as Json });
const err = (error: string) => ({ error });

const str: Check = (v) => (typeof v === 'string' ? keep(v) : err(`must be a string, not ${typeName(v)}`));
const text: Check = (v) =>
  typeof v !== 'string' ? err(`must be a string, not ${typeName(v)}`) : v.trim() === '' ? err('must not be blank') : keep(v);
const bool: Check = (v) => (typeof v === 'boolean' ? keep(v) : err(`must be a boolean, not ${typeName(v)}`));
const anyJson: Check = keep;
const obj: Check = (v) => (isObject(v) ? keep(v) : err(`must be an object, not ${typeName(v)}`));
const posInt: Check = (v) => (isPositiveInt(v) ? keep(v) : err('must be a positive integer'));
const dotPath: Check = (v) => {
  const e = dotPathError(v);
  return e === null ? keep(v) : err(e);
};

/** A JSON Schema object that compiles. */
export const schemaObject: Check = (v) => {
  if (!isObject(v)) return err(`must be a JSON Schema object, not ${typeName(v)}`);
  const e = checkSchema(v);
  return e === null ? keep(v) : err(`is not a valid JSON Schema: ${e}`);
};

const bindings: Check = (v) => {
  if (!isObject(v)) return err(`must be an object of name → dot path, not ${typeName(v)}`);
  for (const [name, path] of Object.entries(v)) {
    const e = dotPathError(path);
    if (e !== null) return err(`'${name}' ${e}`);
  }
  return keep(v);
};

/** Reasoning effort vocabulary (closed). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'] as const;
const effort: Check = (v) =>
  typeof v === 'string' && (REASONING_EFFORTS as readonly string[]).includes(v)
    ? keep(v)
    : err(`must be one of ${REASONING_EFFORTS.join(', ')}`);

const SAMPLING_NUMBERS = new Set([
  'temperature', 'topP', 'topK', 'minP', 'maxOutputTokens', 'seed', 'repeatPenalty', 'repeatLastN',
  'presencePenalty', 'frequencyPenalty', 'numCtx',
]);
const sampling: Check = (v) => {
  if (!isObject(v)) return err(`must be an object, not ${typeName(v)}`);
  for (const [k, m] of Object.entries(v)) {
    if (m === null) continue;
    if (k === 'stop') {
      const ok = typeof m === 'string' || (Array.isArray(m) && m.every((s) => typeof s === 'string'));
      if (!ok) return err("member 'stop' must be a string or an array of strings");
    } else if (SAMPLING_NUMBERS.has(k)) {
      if (typeof m !== 'number') return err(`member '${k}' must be a number`);
    } else return err(`has an unknown member '${k}'`);
  }
  return keep(v);
};

const stringList: Check = (v) =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? keep(v) : err('must be an array of strings');

const labels: Check = (v) => {
  if (!Array.isArray(v)) return err(`must be an array of strings, not ${typeName(v)}`);
  if (v.length < 2 || v.length > 32) return err(`must hold 2–32 labels, not ${v.length}`);
  const seen = new Set<string>();
  for (const l of v) {
    if (typeof l !== 'string' || l.trim() === '') return err('must hold non-blank strings');
    if (l.length > 64) return err(`label '${l.slice(0, 20)}…' is longer than 64 characters`);
    if (seen.has(l)) return err(`label '${l}' appears twice`);
    seen.add(l);
  }
  return keep(v);
};

const unitInterval: Check = (v) =>
  typeof v === 'number' && v >= 0 && v <= 1 ? keep(v) : err('must be a number in [0, 1]');

const decisions: Check = (v) => {
  if (!Array.isArray(v) || v.length === 0) return err('must be a non-empty array drawn from Approve, Reject');
  const seen = new Set<unknown>();
  for (const d of v) {
    if (d !== 'Approve' && d !== 'Reject') return err(`may hold only Approve and Reject, not ${JSON.stringify(d)}`);
    if (seen.has(d)) return err(`lists '${d}' twice`);
    seen.add(d);
  }
  return keep(v);
};

const iterations: Check = (v) =>
  isPositiveInt(v) && v <= 1000 ? keep(v) : err('must be an integer from 1 to 1000');

const exitCondition: Check = (v) => {
  const c = parseCondition(v, undefined);
  return c.ok ? keep({ ...c.condition }) : err(c.errors.join('; '));
};

const httpUrls: Check = (v) => {
  if (!Array.isArray(v)) return err(`must be an array of absolute http(s) URL prefixes, not ${typeName(v)}`);
  for (const u of v) {
    if (parseHttpUrl(u) === null) return err(`${JSON.stringify(u)} is not an absolute http(s) URL`);
  }
  return keep(v);
};

/** An absolute http(s) URL, or null. */
export function parseHttpUrl(u: unknown): URL | null {
  if (typeof u !== 'string') return null;
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.hostname === '') return null;
  return url;
}

interface KindSpec {
  members: Record<string, Check>;
  required: readonly string[];
}

const publishing = { publishToChat: bool, includeAttachments: bool };

/** Closed config member lists per kind. */
export const CONFIG_SPECS: Readonly<Record<NodeKind, KindSpec>> = {
  Start: { members: { inputSchema: schemaObject, defaultInput: anyJson }, required: [] },
  LlmCall: {
    members: {
      model: text, systemPrompt: str, prompt: text, inputBindings: bindings, reasoningEffort: effort,
      responseJsonSchema: schemaObject, samplingOptions: sampling, ...publishing,
    },
    required: ['prompt'],
  },
  Agent: {
    members: {
      instructions: text, model: text, tools: stringList, maxIterations: posInt, maxToolCalls: posInt,
      responseJsonSchema: schemaObject, includeUpstreamOutputs: bool, reasoningEffort: effort, ...publishing,
    },
    required: ['instructions'],
  },
  Tool: { members: { toolName: text, arguments: obj, argumentBindings: bindings, allowedUrls: httpUrls }, required: ['toolName'] },
  Condition: { members: { path: dotPath }, required: [] },
  Parallel: { members: {}, required: [] },
  Join: { members: {}, required: [] },
  Pause: { members: { prompt: text, allowedDecisions: decisions, requireComment: bool }, required: ['prompt', 'allowedDecisions'] },
  End: { members: { outcome: text, resultPath: dotPath, publishToChat: bool }, required: ['outcome'] },
  ChatInput: { members: { prompt: text }, required: ['prompt'] },
  DecisionModel: {
    members: { question: text, labels, model: text, inputBindings: bindings, minConfidence: unitInterval },
    required: ['question', 'labels'],
  },
  Loop: { members: { body: text, maxIterations: iterations, exitCondition, inputBinding: dotPath }, required: ['body', 'maxIterations'] },
  Subworkflow: { members: { definitionId: text, inputBinding: dotPath }, required: ['definitionId'] },
};

/**
 * Check a node's raw `config` against its kind. Returns the cleaned config (null members
 * dropped, invalid members dropped) and error fragments prefixed `config…`.
 */
export function parseConfig(kind: NodeKind, raw: unknown): { config: JsonObject; errors: string[] } {
  const errors: string[] = [];
  const config: JsonObject = {};
  if (raw !== undefined && raw !== null && !isObject(raw)) {
    return { config, errors: [`config must be an object, not ${typeName(raw)}`] };
  }
  const spec = CONFIG_SPECS[kind];
  const src = isObject(raw) ? raw : {};
  for (const k of Object.keys(src)) {
    const v = src[k];
    // null is absent (CONTRACT §8), whatever the member: a null the kind does not read
    // sets nothing, so it is not refused.
    if (v === null) continue;
    const check = hasOwn(spec.members, k) ? spec.members[k] : undefined;
    if (check === undefined) {
      errors.push(`config member '${k}' is not read by ${kind} nodes`);
      continue;
    }
    const r = check(v);
    if ('error' in r) errors.push(`config.${k} ${r.error}`);
    else Object.defineProperty(config, k, { value: r.value, enumerable: true, writable: true, configurable: true });
  }
  for (const k of spec.required) {
    if (!hasOwn(src, k) || src[k] === null) errors.push(`config.${k} is required for ${kind} nodes`);
  }
  return { config, errors };
}
