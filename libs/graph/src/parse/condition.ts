/**
 * Edge (and Loop exit) conditions: `{ path?, op, value? }` (CONTRACT §1.2).
 */
import { CONDITION_OPS } from '../model';
import type { ConditionOp, EdgeCondition, Scalar } from '../model';
import { CONDITION_MEMBER_SPECS } from '../spec/document';
import { dotPathError, hasOwn, isObject, isScalar, typeName } from './util';

const RELATIONAL: ReadonlySet<ConditionOp> = new Set(['Gt', 'Gte', 'Lt', 'Lte']);
const VALUELESS: ReadonlySet<ConditionOp> = new Set(['Exists', 'NotExists']);
const CONDITION_MEMBERS: ReadonlySet<string> = new Set(CONDITION_MEMBER_SPECS.map((m) => m.name));

/** Canonical operator for a case-insensitive name; null for anything else (numeric tokens included). */
export function normaliseOp(op: unknown): ConditionOp | null {
  if (typeof op !== 'string') return null;
  const lower = op.toLowerCase();
  return CONDITION_OPS.find((o) => o.toLowerCase() === lower) ?? null;
}

export type ConditionParse =
  | { ok: true; condition: EdgeCondition }
  | { ok: false; errors: string[]; unresolvedPath: boolean };

/**
 * Parse a condition object. `inheritedPath` is the Condition source's `config.path`
 * (undefined when there is none; null when the source's own `config.path` is invalid,
 * which is reported on the source alone). Errors are message fragments for the caller.
 */
export function parseCondition(raw: unknown, inheritedPath: string | undefined | null): ConditionParse {
  if (!isObject(raw)) return { ok: false, errors: [`condition must be an object, not ${typeName(raw)}`], unresolvedPath: false };
  const errors: string[] = [];
  let unresolvedPath = false;
  for (const k of Object.keys(raw)) {
    if (!CONDITION_MEMBERS.has(k)) errors.push(`condition has an unknown member '${k}'`);
  }
  let path: string | undefined;
  const rawPath = hasOwn(raw, 'path') ? raw.path : undefined;
  if (rawPath !== undefined && rawPath !== null) {
    const pe = dotPathError(rawPath);
    if (pe !== null) errors.push(`condition.path ${pe}`);
    else path = rawPath as string;
  } else if (typeof inheritedPath === 'string') {
    path = inheritedPath;
  } else if (inheritedPath === null) {
    unresolvedPath = true;
  } else {
    unresolvedPath = true;
    errors.push("condition has no path, and its source is not a Condition node with a 'config.path' to inherit");
  }

  let op: ConditionOp | null = null;
  const rawOp = hasOwn(raw, 'op') ? raw.op : undefined;
  if (rawOp === undefined || rawOp === null) errors.push('condition.op is required');
  else if (typeof rawOp === 'number' || (typeof rawOp === 'string' && /^\s*[+-]?\d+\s*$/.test(rawOp))) {
    errors.push(`condition.op ${JSON.stringify(rawOp)} is a numeric token; name the operator (${CONDITION_OPS.join(', ')})`);
  } else {
    op = normaliseOp(rawOp);
    if (op === null) errors.push(`condition.op ${JSON.stringify(rawOp)} is not one of ${CONDITION_OPS.join(', ')}`);
  }

  let value: Scalar = null;
  const hasValue = hasOwn(raw, 'value');
  if (op !== null && VALUELESS.has(op)) {
    value = null;
  } else if (!hasValue) {
    if (op !== null) errors.push(`condition.op ${op} needs a value`);
  } else if (!isScalar(raw.value)) {
    errors.push(`condition.value must be a scalar (string, number, boolean or null), not ${typeName(raw.value)}`);
  } else {
    value = raw.value;
    if (op !== null && RELATIONAL.has(op) && typeof value === 'boolean') {
      errors.push(`condition.op ${op} cannot compare against a boolean`);
    }
  }
  if (errors.length > 0 || path === undefined || op === null) return { ok: false, errors, unresolvedPath };
  return { ok: true, condition: { path, op, value } };
}
