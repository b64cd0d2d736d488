/**
 * Concurrency keys, pure: the key value a run gets at creation from its
 * definition's `concurrency` block, and whether a Pending run of a key may be admitted.
 *
 * The key is the dot path `concurrency.key` over `{ input: <run input> }` (the condition
 * path walker: plain objects only, no indexing). A string, a finite number (or an exact
 * JSON number), or a boolean there is the value, as text, at most
 * {@link MAX_CONCURRENCY_VALUE_LENGTH} characters; anything else — missing, null, an object or
 * array, a longer text — leaves the run WITHOUT a key: it is not limited, and its
 * `run.created` event says why. Strings and numbers share one space (`"7"` and `7` are one key).
 */
import { resolvePath } from '../conditions/path';
import { JsonNumber } from '../conditions/exact-json';
import type { Graph } from '../model';

export const MAX_CONCURRENCY_VALUE_LENGTH = 200;

/** A run's concurrency key at creation: none (no block), a value, or none with the reason. */
export type ConcurrencyKeyOf =
  | { kind: 'none' }
  | { kind: 'keyed'; path: string; value: string; limit: number }
  | { kind: 'unkeyed'; path: string; reason: string };

/** The concurrency key of a run of `graph` started with `input`. Never throws. */
export function concurrencyKeyOf(graph: Pick<Graph, 'concurrency'>, input: unknown): ConcurrencyKeyOf {
  const c = graph.concurrency;
  if (!c) return { kind: 'none' };
  const r = resolvePath({ input }, c.key);
  if (!r.found || r.value === undefined) return { kind: 'unkeyed', path: c.key, reason: `${c.key} is missing from the run input` };
  const v = r.value;
  let text: string | null = null;
  if (typeof v === 'string') text = v;
  else if (typeof v === 'boolean') text = String(v);
  else if (typeof v === 'number' && Number.isFinite(v)) text = String(v);
  else if (v instanceof JsonNumber) text = v.text;
  if (text === null) {
    const what = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v;
    return { kind: 'unkeyed', path: c.key, reason: `${c.key} is ${what}, not a string, number or boolean` };
  }
  if (text.length > MAX_CONCURRENCY_VALUE_LENGTH) {
    return { kind: 'unkeyed', path: c.key, reason: `${c.key} is longer than ${MAX_CONCURRENCY_VALUE_LENGTH} characters` };
  }
  return { kind: 'keyed', path: c.key, value: text, limit: c.limit };
}

/**
 * Whether a Pending run of a key may take a place now: `live` runs of the key hold one
 * (claimed, not ended), `ahead` Pending runs of the key come before it in admission order and
 * have no place yet; it may while `live + ahead < limit`.
 */
export function concurrencyPlaceFree(live: number, ahead: number, limit: number): boolean {
  return Math.max(0, live) + Math.max(0, ahead) < limit;
}
