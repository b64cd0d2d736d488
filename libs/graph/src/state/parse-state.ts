/**
 * Parsing the run-state members: the graph's `state` block (`schema`, `reducers`,
 * `initial`), each node's `writes`, and the rules that tie them together. Errors are keyed
 * (the graph: null; a node's writes: the node) and name members, never values.
 *
 * The rejectConflict rule. Two writers of a `rejectConflict` key must be ordered by the graph
 * (one an ancestor of the other). Then the one that runs second always commits second,
 * whatever the timing of other branches, so a conflict (a different value than the key
 * holds) fails the same node in every run. Two writers that could run side by side would
 * let the timing choose which one fails; such a graph is refused at save, with `overwrite`
 * (last commit wins) or an ordering edge as the way out.
 */
import { isValidPath } from '../conditions/path';
import { ancestorsOf } from '../fork/fork-plan';
import { STATE_REDUCERS, type Graph, type GraphNode, type Json, type JsonObject, type StateReducer, type StateSpec } from '../model';
import { validateJson } from '../schema';
import { schemaObject } from '../parse/member-check';
import { KEY_PATTERN, hasOwn, isObject, q, typeName, type Issues } from '../parse/util';

/** Members of the `state` block. */
export const STATE_MEMBERS = ['schema', 'reducers', 'initial'] as const;

/** What a reducer needs the key's value to be, as a JSON Schema `type`. */
const REDUCER_TYPE: Partial<Record<StateReducer, { types: readonly string[]; noun: string }>> = {
  append: { types: ['array'], noun: 'an array' },
  sum: { types: ['number', 'integer'], noun: 'a number' },
  merge: { types: ['object'], noun: 'an object' },
};

function fitsReducer(reducer: StateReducer, v: Json): boolean {
  if (reducer === 'append') return Array.isArray(v);
  if (reducer === 'sum') return typeof v === 'number' && Number.isFinite(v);
  if (reducer === 'merge') return isObject(v);
  return true;
}

/** Parses the graph's `state` block (absent: the empty declaration); errors keyed null. */
export function parseStateBlock(raw: unknown, out: Issues): StateSpec {
  const spec: StateSpec = { schema: null, reducers: {}, initial: {} };
  if (raw === undefined || raw === null) return spec;
  if (!isObject(raw)) {
    out.error(null, `'state' must be an object, not ${typeName(raw)}`);
    return spec;
  }
  for (const k of Object.keys(raw)) if (!(STATE_MEMBERS as readonly string[]).includes(k)) out.error(null, `'state' has an unknown member '${k}'`);
  const schema = hasOwn(raw, 'schema') && raw.schema !== null ? raw.schema : undefined;
  if (schema !== undefined) {
    const r = schemaObject(schema);
    if ('error' in r) out.error(null, `state.schema ${r.error}`);
    else spec.schema = r.value as JsonObject;
  }
  const reducers = hasOwn(raw, 'reducers') && raw.reducers !== null ? raw.reducers : undefined;
  if (reducers !== undefined) {
    if (!isObject(reducers)) out.error(null, `state.reducers must be an object of state key → reducer, not ${typeName(reducers)}`);
    else {
      for (const [key, r] of Object.entries(reducers)) {
        if (!KEY_PATTERN.test(key)) out.error(null, `state.reducers: ${stateKeyProblem(key)}`);
        else if (typeof r !== 'string' || !(STATE_REDUCERS as readonly string[]).includes(r)) {
          out.error(null, `state.reducers.${key} must be one of ${STATE_REDUCERS.join(', ')}, not ${JSON.stringify(r) ?? typeName(r)}`);
        } else spec.reducers[key] = r as StateReducer;
      }
    }
  }
  const initial = hasOwn(raw, 'initial') && raw.initial !== null ? raw.initial : undefined;
  if (initial !== undefined) {
    if (!isObject(initial)) out.error(null, `state.initial must be an object, not ${typeName(initial)}`);
    else {
      for (const [key, v] of Object.entries(initial)) {
        if (!KEY_PATTERN.test(key)) out.error(null, `state.initial: ${stateKeyProblem(key)}`);
        const reducer = spec.reducers[key] ?? 'overwrite';
        if (!fitsReducer(reducer, v as Json)) out.error(null, `state.initial.${key} must be ${REDUCER_TYPE[reducer]!.noun} for the ${reducer} reducer`);
      }
      spec.initial = initial as JsonObject;
    }
  }
  if (spec.schema) checkAgainstSchema(spec, out);
  return spec;
}

function stateKeyProblem(key: string): string {
  return `state key ${JSON.stringify(key)} must be 1–64 characters of letters, digits, '_' and '-'`;
}

/** Reducers type-checked against the schema's declared property types, and `initial` validated. */
function checkAgainstSchema(spec: StateSpec, out: Issues): void {
  const props = spec.schema!['properties'];
  for (const [key, reducer] of Object.entries(spec.reducers)) {
    const need = REDUCER_TYPE[reducer];
    const prop = isObject(props) ? props[key] : undefined;
    const declared = isObject(prop) ? prop['type'] : undefined;
    if (!need || declared === undefined) continue;
    const types = Array.isArray(declared) ? declared : [declared];
    if (!types.some((t) => typeof t === 'string' && need.types.includes(t))) {
      out.error(null, `state.reducers.${key} is ${reducer}, which needs ${need.noun}, but state.schema declares ${key} as ${JSON.stringify(declared)}`);
    }
  }
  const v = validateJson(spec.schema!, spec.initial);
  if (!v.valid) out.error(null, `state.initial does not match state.schema: ${v.errors.join('; ')}`);
}

/** Parses a node's `writes` (state key → dot path into its own output envelope); errors are the node's. */
export function parseWrites(raw: unknown, errors: string[]): Record<string, string> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    errors.push(`writes must be an object of state key → dot path into the node's output envelope, not ${typeName(raw)}`);
    return undefined;
  }
  const writes: Record<string, string> = {};
  for (const [key, path] of Object.entries(raw)) {
    if (!KEY_PATTERN.test(key)) errors.push(`writes: ${stateKeyProblem(key)}`);
    else if (typeof path !== 'string' || !isValidPath(path)) errors.push(`writes.${key} must be a dot path into the node's output envelope (e.g. output.json.items), not ${JSON.stringify(path) ?? typeName(path)}`);
    else writes[key] = path;
  }
  return writes;
}

/**
 * The run-state keys a node writes when it succeeds: its `writes`, and a Subworkflow's
 * `stateOut` (the child's final state written through this run's reducers).
 */
export function stateKeysWrittenBy(node: Pick<GraphNode, 'writes' | 'kind' | 'config'>): string[] {
  const keys = node.writes ? Object.keys(node.writes) : [];
  const out = node.kind === 'Subworkflow' ? node.config['stateOut'] : undefined;
  if (isObject(out)) for (const k of Object.keys(out)) if (!keys.includes(k)) keys.push(k);
  return keys;
}

/**
 * A Subworkflow's `stateIn` / `stateOut` keys are state keys, and `stateOut` may not write a
 * key the node's own `writes` also write (one node, one value per key). Errors are the node's.
 */
export function checkChildStateMembers(node: Pick<GraphNode, 'writes' | 'kind' | 'config'>, errors: string[]): void {
  for (const member of ['stateIn', 'stateOut'] as const) {
    const v = node.config[member];
    if (!isObject(v)) continue;
    for (const key of Object.keys(v)) {
      if (!KEY_PATTERN.test(key)) errors.push(`config.${member}: ${stateKeyProblem(key)}`);
      else if (member === 'stateOut' && node.writes && hasOwn(node.writes, key)) {
        errors.push(`config.stateOut.${key}: state key '${key}' is written by the node's writes too; write it once`);
      }
    }
  }
}

/** True when the graph keeps run state: a `state` block, a node's `writes` or `stateOut`, or a condition on `state.…`. */
export function keepsState(hasBlock: boolean, nodes: readonly GraphNode[], edges: Graph['edges']): boolean {
  return hasBlock || nodes.some((n) => stateKeysWrittenBy(n).length > 0) || edges.some((e) => e.condition?.path.startsWith('state.') === true);
}

/** The rejectConflict rule (module header): writers of such a key must be ordered by the graph. */
export function checkConflictWriters(graph: Pick<Graph, 'nodes' | 'edges'>, spec: StateSpec, out: Issues): void {
  const ancestors = new Map<string, Set<string>>();
  const ancestorsOfKey = (k: string): Set<string> => {
    let a = ancestors.get(k);
    if (!a) ancestors.set(k, (a = ancestorsOf(graph as Graph, k)));
    return a;
  };
  for (const [key, reducer] of Object.entries(spec.reducers)) {
    if (reducer !== 'rejectConflict') continue;
    const writers = graph.nodes.filter((n) => stateKeysWrittenBy(n).includes(key));
    for (let i = 0; i < writers.length; i++) {
      for (let j = i + 1; j < writers.length; j++) {
        const a = writers[i]!;
        const b = writers[j]!;
        if (ancestorsOfKey(b.key).has(a.key) || ancestorsOfKey(a.key).has(b.key)) continue;
        out.error(
          b.key,
          `${b.kind} ${q(b.key)}: writes rejectConflict state key '${key}', which ${q(a.key)} writes too, and neither runs before the other ` +
            '(which one would fail would depend on timing): order them with an edge, or use the overwrite reducer',
        );
      }
    }
  }
}
