/**
 * Outputs of the kinds the planner executes inline (CONTRACT §2): Start, Condition,
 * Parallel, Join, End. Pure functions of the input document and the node's config.
 */
import { resolvePath } from '../conditions';
import type { GraphNode, InputDocument, Json, JsonObject, OutputEnvelope } from '../model';

/** Start → `{ input }`: the run input, or `config.defaultInput` when the run input is null/absent. */
export function startOutput(node: GraphNode, runInput: Json | undefined): JsonObject {
  const fallback = node.config['defaultInput'];
  const input = runInput === undefined || runInput === null ? (fallback ?? null) : runInput;
  return { input };
}

/** Condition/Parallel → the single predecessor's `output` verbatim; `{}` with none or several. */
export function passThroughOutput(doc: InputDocument): Json {
  const keys = Object.keys(doc.upstream);
  if (keys.length !== 1) return {};
  return doc.upstream[keys[0]!]?.output ?? null;
}

/** Join → `{ <sourceKey>: <envelope>, … }` over its satisfied inbound edges. */
export function joinOutput(doc: InputDocument): JsonObject {
  const out: JsonObject = {};
  for (const [key, env] of Object.entries(doc.upstream)) out[key] = envelopeAsJson(env);
  return out;
}

/**
 * End → `{ outcome, result }`: `result` is the value at `config.resultPath` in the input
 * document (null when missing), or the whole input document when no path is set.
 */
export function endOutput(node: GraphNode, doc: InputDocument): JsonObject {
  const outcome = node.config['outcome'] ?? null;
  const path = node.config['resultPath'];
  const docJson = inputDocumentAsJson(doc);
  if (typeof path !== 'string' || path === '') return { outcome, result: docJson };
  const hit = resolvePath(docJson, path);
  return { outcome, result: hit.found ? (hit.value as Json) : null };
}

/** The inline output of `node`, or null when its kind is not inline. */
export function inlineOutput(node: GraphNode, doc: InputDocument, runInput: Json | undefined): Json | null {
  switch (node.kind) {
    case 'Start':
      return startOutput(node, runInput);
    case 'Condition':
    case 'Parallel':
      return passThroughOutput(doc);
    case 'Join':
      return joinOutput(doc);
    case 'End':
      return endOutput(node, doc);
    default:
      return null;
  }
}

/** An envelope as a plain JSON object (drops an absent `error`). */
export function envelopeAsJson(env: OutputEnvelope): JsonObject {
  const out: JsonObject = { status: env.status, attempt: env.attempt, branch: env.branch, output: env.output };
  if (env.error) out['error'] = { class: env.error.class, reason: env.error.reason };
  if (env.state) out['state'] = env.state;
  return out;
}

/** An input document as a plain JSON object. */
export function inputDocumentAsJson(doc: InputDocument): JsonObject {
  const upstream: JsonObject = {};
  for (const [k, v] of Object.entries(doc.upstream)) upstream[k] = envelopeAsJson(v);
  let input: Json = null;
  if (doc.input !== null) {
    input = isEnvelope(doc.input) ? envelopeAsJson(doc.input) : upstream;
  }
  const json: JsonObject = { run: { input: doc.run.input }, upstream, input };
  if (doc.state) json['state'] = doc.state;
  return json;
}

function isEnvelope(v: InputDocument['input']): v is OutputEnvelope {
  return v !== null && typeof (v as OutputEnvelope).status === 'string' && 'attempt' in v && 'output' in v;
}
