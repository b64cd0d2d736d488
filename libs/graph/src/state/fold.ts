/**
 * The run state as a fold of its writes. Pure: the store keeps the writes (one entry per
 * `state.updated` event, numbered by that event's `seq`), and this module computes the state
 * from them, for the planner (the state a node reads and writes into) and for the API (the
 * state as of any event).
 *
 * The order rule, so the final state of a run does not depend on which branch finished
 * first:
 * - `append`, `sum` and `merge` are folded in NODE KEY order (code-unit order of the writing
 *   node's key; one node's own writes in commit order), over the key's base value. A write
 *   landing "late" is placed where its key sorts: `append` keeps items in writer-key order,
 *   `sum` adds in that order (so floating-point rounding is the same in every run), `merge`
 *   merges in that order (the greatest writer key wins a member both write).
 * - `overwrite` and `rejectConflict` apply in commit order (the store's event order; within
 *   one tick the planner settles results in node key order).
 * - A base entry (`nodeKey` null: a fork's seed, a Subworkflow's `stateIn`) sets values as
 *   they are, whatever the reducer, before the node writes that follow it.
 */
import { canonicalJson } from '../schema/canonical-json';
import { utf8ByteLength } from '../documents/envelope';
import type { Json, JsonObject, StateReducer, StateSpec } from '../model';
import { validateJson } from '../schema';

/** One entry of a run's state log: the writes of one node (or a base, `nodeKey` null) at `seq`. */
export interface StateWrite {
  /** the seq of the `state.updated` event that committed it; 0 for a run's seed */
  seq: number;
  /** the writing node; null for a base (seed) entry */
  nodeKey: string | null;
  /** state key → the value written (before reduction) */
  writes: JsonObject;
}

/** Why a node's writes are refused: a reason naming the state key and reducer, never a value. */
export type WriteVerdict = { ok: true; keys: string[]; state: JsonObject } | { ok: false; reason: string };

interface Contribution {
  nodeKey: string;
  seq: number;
  value: Json;
}

const COMMUTATIVE: ReadonlySet<StateReducer> = new Set(['append', 'sum', 'merge']);

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The reducer of `key` under `spec`: the declared one, else `overwrite`. */
export function reducerOf(spec: StateSpec, key: string): StateReducer {
  return Object.prototype.hasOwnProperty.call(spec.reducers, key) ? spec.reducers[key]! : 'overwrite';
}

/** Orders contributions: writer key (code units), then commit order. */
function byWriter(a: Contribution, b: Contribution): number {
  return a.nodeKey < b.nodeKey ? -1 : a.nodeKey > b.nodeKey ? 1 : a.seq - b.seq;
}

/** Reduce a commutative key: its base then its contributions, already in writer order. */
function reduceKey(reducer: StateReducer, base: Json | undefined, contributions: readonly Contribution[]): Json {
  if (reducer === 'append') return [...(Array.isArray(base) ? base : []), ...contributions.map((c) => c.value)];
  if (reducer === 'sum') {
    let total = isFiniteNumber(base) ? base : 0;
    for (const c of contributions) total += c.value as number;
    return total;
  }
  const merged: JsonObject = isObject(base) ? { ...base } : {};
  for (const c of contributions) Object.assign(merged, c.value as JsonObject);
  return merged;
}

/**
 * A run's state, folded from its log and extended one node write at a time. The planner
 * keeps one per tick; `values` is the state a node reads.
 */
export class RunStateFold {
  private current: JsonObject;
  /** commutative keys: the base value and the writes received, in writer order */
  private readonly bases = new Map<string, Json>();
  private readonly contributions = new Map<string, Contribution[]>();
  /** rejectConflict keys: who wrote the value standing (null: a base entry) */
  private readonly writers = new Map<string, string | null>();

  constructor(
    readonly spec: StateSpec,
    log: readonly StateWrite[] = [],
  ) {
    this.current = { ...spec.initial };
    for (const [k, v] of Object.entries(spec.initial)) if (COMMUTATIVE.has(reducerOf(spec, k))) this.bases.set(k, v);
    for (const entry of log) this.replay(entry);
  }

  /** The state now. Read only: the fold replaces it on each write. */
  get values(): JsonObject {
    return this.current;
  }

  /** Applies a stored entry as it was committed (no judgement: it was judged when written). */
  private replay(entry: StateWrite): void {
    const next = { ...this.current };
    for (const [key, value] of Object.entries(entry.writes)) {
      const reducer = reducerOf(this.spec, key);
      if (entry.nodeKey === null) {
        next[key] = value;
        if (COMMUTATIVE.has(reducer)) {
          this.bases.set(key, value);
          this.contributions.delete(key);
        } else if (reducer === 'rejectConflict') this.writers.set(key, null);
        continue;
      }
      next[key] = this.reduced(key, reducer, { nodeKey: entry.nodeKey, seq: entry.seq, value }, true);
      if (reducer === 'rejectConflict') this.writers.set(key, entry.nodeKey);
    }
    this.current = next;
  }

  /** The value of `key` once `c` is added; `keep` records the contribution. */
  private reduced(key: string, reducer: StateReducer, c: Contribution, keep: boolean): Json {
    if (!COMMUTATIVE.has(reducer)) return c.value;
    const list = [...(this.contributions.get(key) ?? [])];
    let at = list.length;
    while (at > 0 && byWriter(list[at - 1]!, c) > 0) at--;
    list.splice(at, 0, c);
    if (keep) this.contributions.set(key, list);
    return reduceKey(reducer, this.bases.get(key), list);
  }

  /**
   * Judges `nodeKey`'s writes at `seq` without applying them: the state they would make, or
   * why they are refused — a value the reducer cannot take (sum: a number; merge: an object;
   * a base that is not an array/number/object), a rejectConflict key another writer already
   * set to a different value, the schema, the size cap. Reasons name the key and reducer only.
   */
  judge(nodeKey: string, seq: number, writes: JsonObject, maxBytes: number): WriteVerdict {
    const keys = Object.keys(writes).sort();
    const next = { ...this.current };
    for (const key of keys) {
      const value = writes[key]!;
      const reducer = reducerOf(this.spec, key);
      const refused = this.refusal(nodeKey, key, reducer, value);
      if (refused) return { ok: false, reason: refused };
      next[key] = this.reduced(key, reducer, { nodeKey, seq, value }, false);
    }
    if (this.spec.schema) {
      const v = validateJson(this.spec.schema, next);
      if (!v.valid) return { ok: false, reason: `state after writing ${keys.map((k) => `'${k}'`).join(', ')} does not match state.schema` };
    }
    const bytes = utf8ByteLength(next);
    if (bytes > maxBytes) {
      return { ok: false, reason: `state would be ${bytes} UTF-8 bytes after writing ${keys.map((k) => `'${k}'`).join(', ')}, over MAX_RUN_STATE_BYTES (${maxBytes})` };
    }
    return { ok: true, keys, state: next };
  }

  /** Applies writes `judge` accepted (same arguments). */
  commit(nodeKey: string, seq: number, writes: JsonObject): void {
    this.replay({ seq, nodeKey, writes });
  }

  private refusal(nodeKey: string, key: string, reducer: StateReducer, value: Json): string | null {
    const name = `state key '${key}' (${reducer})`;
    const base = this.bases.get(key);
    if (reducer === 'sum') {
      if (!isFiniteNumber(value)) return `${name} needs a finite number to add`;
      if (base !== undefined && !isFiniteNumber(base)) return `${name} holds a value that is not a number`;
    }
    if (reducer === 'merge') {
      if (!isObject(value)) return `${name} needs an object to merge`;
      if (base !== undefined && !isObject(base)) return `${name} holds a value that is not an object`;
    }
    if (reducer === 'append' && base !== undefined && !Array.isArray(base)) return `${name} holds a value that is not an array`;
    if (reducer === 'rejectConflict' && this.writers.has(key)) {
      const writer = this.writers.get(key);
      if (writer !== nodeKey && canonicalJson(this.current[key]) !== canonicalJson(value)) {
        return `${name} conflicts: ${writer === null ? 'the run was started with' : `node '${writer}' already wrote`} a different value`;
      }
    }
    return null;
  }
}

/** The state `log` folds to; with `atSeq`, only the entries committed at or before it. */
export function foldState(spec: StateSpec, log: readonly StateWrite[], atSeq?: number): JsonObject {
  const entries = atSeq === undefined ? log : log.filter((e) => e.seq <= atSeq);
  return new RunStateFold(spec, entries).values;
}
