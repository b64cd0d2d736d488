/**
 * Member checks derived from the member descriptions of `spec/`: one check per
 * {@link MemberType}, parameterised by the description's range, values and flags. The
 * per-kind config parser uses nothing else, so a description and the parser cannot
 * disagree.
 */
import type { Json, JoinPolicy } from '../model';
import { checkSchema } from '../schema';
import type { MemberSpec } from '../spec/member';
import { parseCondition } from './condition';
import { dotPathError, isObject, isScalar, KEY_PATTERN, typeName } from './util';

/** Member check: an error fragment, or the (possibly normalised) value to keep. */
export type Check = (v: unknown) => { error: string } | { value: Json };

const keep = (v: unknown) => ({ value: v as Json });
const err = (error: string) => ({ error });

/** A JSON Schema object that compiles. */
export const schemaObject: Check = (v) => {
  if (!isObject(v)) return err(`must be a JSON Schema object, not ${typeName(v)}`);
  const e = checkSchema(v);
  return e === null ? keep(v) : err(`is not a valid JSON Schema: ${e}`);
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

function stringCheck(m: MemberSpec): Check {
  return (v) => {
    if (typeof v !== 'string') return err(`must be a string, not ${typeName(v)}`);
    if (m.nonBlank === true && v.trim() === '') return err('must not be blank');
    return keep(v);
  };
}

function rangeText(m: MemberSpec, noun: 'an integer' | 'a number'): string {
  const { min, max } = m;
  if (noun === 'a number') {
    if (min !== undefined && max !== undefined) return `must be a number in [${min}, ${max}]`;
    if (min !== undefined) return `must be a number ≥ ${min}`;
    if (max !== undefined) return `must be a number ≤ ${max}`;
    return 'must be a number';
  }
  if (min !== undefined && max !== undefined) return `must be an integer from ${min} to ${max}`;
  if (min === 1) return 'must be a positive integer';
  if (min === 0) return 'must be a non-negative integer';
  if (min !== undefined) return `must be an integer ≥ ${min}`;
  if (max !== undefined) return `must be an integer ≤ ${max}`;
  return 'must be an integer';
}

function numberCheck(m: MemberSpec, integer: boolean): Check {
  const text = rangeText(m, integer ? 'an integer' : 'a number');
  return (v) => {
    const ok =
      typeof v === 'number' &&
      Number.isFinite(v) &&
      (!integer || Number.isSafeInteger(v)) &&
      (m.min === undefined || v >= m.min) &&
      (m.max === undefined || v <= m.max);
    return ok ? keep(v) : err(text);
  };
}

function enumCheck(m: MemberSpec): Check {
  const values = m.values ?? [];
  return (v) => (typeof v === 'string' && values.includes(v) ? keep(v) : err(`must be one of ${values.join(', ')}`));
}

/** A non-empty list of distinct `values`. */
function enumListCheck(m: MemberSpec): Check {
  const values = m.values ?? [];
  const drawn = values.join(', ');
  const only = values.length === 2 ? `${values[0]} and ${values[1]}` : drawn;
  return (v) => {
    if (!Array.isArray(v) || v.length < (m.minItems ?? 1)) return err(`must be a non-empty array drawn from ${drawn}`);
    const seen = new Set<unknown>();
    for (const d of v) {
      if (typeof d !== 'string' || !values.includes(d)) return err(`may hold only ${only}, not ${JSON.stringify(d)}`);
      if (m.unique === true && seen.has(d)) return err(`lists '${d}' twice`);
      seen.add(d);
    }
    return keep(v);
  };
}

function stringListCheck(m: MemberSpec): Check {
  const noun = m.itemNoun ?? 'item';
  const plural = m.format === 'httpUrl' ? 'absolute http(s) URL prefixes' : 'strings';
  return (v) => {
    if (!Array.isArray(v)) return err(`must be an array of ${plural}, not ${typeName(v)}`);
    const { minItems: lo, maxItems: hi } = m;
    if ((lo !== undefined && v.length < lo) || (hi !== undefined && v.length > hi)) {
      const range = lo !== undefined && hi !== undefined ? `${lo}–${hi}` : lo !== undefined ? `at least ${lo}` : `at most ${hi}`;
      return err(`must hold ${range} ${noun}s, not ${v.length}`);
    }
    const seen = new Set<string>();
    for (const s of v) {
      if (typeof s !== 'string') return err(`must be an array of ${plural}`);
      if (m.nonBlank === true && s.trim() === '') return err('must hold non-blank strings');
      if (m.format === 'httpUrl' && parseHttpUrl(s) === null) return err(`${JSON.stringify(s)} is not an absolute http(s) URL`);
      if (m.maxLength !== undefined && s.length > m.maxLength) return err(`${noun} '${s.slice(0, 20)}…' is longer than ${m.maxLength} characters`);
      if (m.unique === true && seen.has(s)) return err(`${noun} '${s}' appears twice`);
      seen.add(s);
    }
    return keep(v);
  };
}

const stringOrList: Check = (v) =>
  typeof v === 'string' || (Array.isArray(v) && v.every((s) => typeof s === 'string')) ? keep(v) : err('must be a string or an array of strings');

const dotPath: Check = (v) => {
  const e = dotPathError(v);
  return e === null ? keep(v) : err(e);
};

const bindings: Check = (v) => {
  if (!isObject(v)) return err(`must be an object of name → dot path, not ${typeName(v)}`);
  for (const [name, path] of Object.entries(v)) {
    const e = dotPathError(path);
    if (e !== null) return err(`'${name}' ${e}`);
  }
  return keep(v);
};

const condition: Check = (v) => {
  const c = parseCondition(v, undefined);
  return c.ok ? keep({ ...c.condition }) : err(c.errors.join('; '));
};

/** A closed object: each member checked by its own description; null members read as absent. */
function recordCheck(m: MemberSpec): Check {
  const members = new Map((m.members ?? []).map((s) => [s.name, checkOf(s)] as const));
  return (v) => {
    if (!isObject(v)) return err(`must be an object, not ${typeName(v)}`);
    for (const [k, sub] of Object.entries(v)) {
      if (sub === null) continue;
      const check = members.get(k);
      if (check === undefined) return err(`has an unknown member '${k}'`);
      const r = check(sub);
      if ('error' in r) return err(`member '${k}' ${r.error}`);
    }
    return keep(v);
  };
}

/** The check a member description calls for. */
export function checkOf(m: MemberSpec): Check {
  switch (m.type) {
    case 'string':
      return stringCheck(m);
    case 'key':
      return (v) => (typeof v === 'string' && KEY_PATTERN.test(v) ? keep(v) : err("must be 1–64 characters of letters, digits, '_' and '-'"));
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? keep(v) : err(`must be a boolean, not ${typeName(v)}`));
    case 'integer':
      return numberCheck(m, true);
    case 'number':
      return numberCheck(m, false);
    case 'enum':
      return enumCheck(m);
    case 'enumList':
      return enumListCheck(m);
    case 'stringList':
      return stringListCheck(m);
    case 'stringOrList':
      return stringOrList;
    case 'dotPath':
      return dotPath;
    case 'bindings':
      return bindings;
    case 'jsonSchema':
      return schemaObject;
    case 'json':
    case 'list':
      return keep;
    case 'object':
      return (v) => (isObject(v) ? keep(v) : err(`must be an object, not ${typeName(v)}`));
    case 'scalar':
      return (v) => (isScalar(v) ? keep(v) : err(`must be a scalar (string, number, boolean or null), not ${typeName(v)}`));
    case 'condition':
      return condition;
    case 'record':
      return recordCheck(m);
    case 'joinPolicy':
      return (v) => {
        const j = parseJoinPolicy(v);
        return 'error' in j ? err(j.error) : keep(j.policy);
      };
    case 'position':
      return (v) =>
        isObject(v) && typeof v.x === 'number' && typeof v.y === 'number' ? keep({ x: v.x, y: v.y }) : err('must be { x, y } with numeric members');
  }
}

/** A join policy document, or the error fragment. */
export function parseJoinPolicy(v: unknown): { policy: JoinPolicy } | { error: string } {
  if (v === 'All' || v === 'Any' || v === 'First') return { policy: v };
  if (isObject(v)) {
    const extra = Object.keys(v).filter((k) => k !== 'quorum');
    if (extra.length > 0) return { error: `joinPolicy object has an unknown member '${extra[0]}'` };
    if (!Number.isSafeInteger(v.quorum) || (v.quorum as number) < 2) return { error: 'joinPolicy.quorum must be an integer ≥ 2' };
    return { policy: { quorum: v.quorum as number } };
  }
  return { error: `joinPolicy must be "All", "Any", "First" or { "quorum": N }, not ${JSON.stringify(v) ?? typeName(v)}` };
}

/** A member list compiled to checks, by name; `required` in declaration order. */
export interface CompiledMembers {
  checks: ReadonlyMap<string, Check>;
  required: readonly string[];
}

export function compileMembers(list: readonly MemberSpec[]): CompiledMembers {
  return {
    checks: new Map(list.map((m) => [m.name, checkOf(m)] as const)),
    required: list.filter((m) => m.required).map((m) => m.name),
  };
}
