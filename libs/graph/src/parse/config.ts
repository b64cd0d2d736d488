/**
 * Per-kind node config (CONTRACT §2), checked against the kind's member descriptions
 * (`spec/node-kinds.ts`): the closed member list, each member's check, the required
 * members. `null` members are read as absent (even ones the kind does not read) and
 * dropped from the parsed config.
 */
import type { JsonObject, NodeKind } from '../model';
import { NODE_KINDS } from '../model';
import { NODE_KIND_SPECS } from '../spec/node-kinds';
import { compileMembers, type CompiledMembers } from './member-check';
import { hasOwn, isObject, typeName } from './util';

/** Each kind's config members compiled once. */
const COMPILED: ReadonlyMap<NodeKind, CompiledMembers> = new Map(NODE_KINDS.map((k) => [k, compileMembers(NODE_KIND_SPECS[k].config)] as const));

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
  const spec = COMPILED.get(kind)!;
  const src = isObject(raw) ? raw : {};
  for (const k of Object.keys(src)) {
    const v = src[k];
    // null is absent (CONTRACT §8), whatever the member: a null the kind does not read
    // sets nothing, so it is not refused.
    if (v === null) continue;
    const check = spec.checks.get(k);
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
