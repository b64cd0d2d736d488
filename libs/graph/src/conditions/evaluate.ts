/**
 * Edge-condition evaluation (CONTRACT §1.2, §8 Routing details), failing closed.
 */
import type { ConditionOp, EdgeCondition, OutputEnvelope } from '../model';
import { compareExactNumbers, compareOrdinal, isExactNumber } from './compare';
import { isValidPath, resolvePath } from './path';

type Kind = 'number' | 'string' | 'boolean' | 'null';

function kindOf(v: unknown): Kind | null {
  if (v === null) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (isExactNumber(v)) return 'number';
  return null;
}

function verdict(op: ConditionOp, order: -1 | 0 | 1): boolean {
  switch (op) {
    case 'Eq':
      return order === 0;
    case 'Ne':
      return order !== 0;
    case 'Gt':
      return order > 0;
    case 'Gte':
      return order >= 0;
    case 'Lt':
      return order < 0;
    case 'Lte':
      return order <= 0;
    default:
      return false;
  }
}

/**
 * Compares a resolved value with a condition's value under `op` (not Exists/NotExists).
 * False on any type mismatch (`Ne` included): both sides must be numbers
 * (number | bigint | JsonNumber, compared exactly), both strings (ordinal, UTF-16 code
 * units), both booleans or both null; booleans and null support only Eq/Ne; objects,
 * arrays, undefined and non-finite numbers match nothing.
 */
export function compareValues(op: ConditionOp, actual: unknown, expected: unknown): boolean {
  const ka = kindOf(actual);
  const kb = kindOf(expected);
  if (ka === null || ka !== kb) return false;
  if (ka === 'number') {
    const order = compareExactNumbers(actual as never, expected as never);
    return order !== null && verdict(op, order);
  }
  if (ka === 'string') return verdict(op, compareOrdinal(actual as string, expected as string));
  if (op !== 'Eq' && op !== 'Ne') return false;
  return verdict(op, actual === expected ? 0 : 1);
}

/**
 * Evaluates `condition` against the SOURCE node's output envelope: `path` is read from
 * the envelope root (`output.json.x`, `status`, `branch`). A missing path is false for
 * every op except `NotExists`; `Exists` is true for any present value, null included.
 * An invalid path (empty segment, wildcard, indexing) or an unknown op never fires,
 * `NotExists` included.
 */
export function evaluateCondition(condition: EdgeCondition, envelope: OutputEnvelope): boolean {
  return evaluateConditionOn(condition, envelope);
}

/**
 * The same evaluation over any document (`path` read from its root): an Agent's tool
 * approval reads `{ tool, arguments }` (parse/tool-approvals.ts).
 */
export function evaluateConditionOn(condition: EdgeCondition, root: unknown): boolean {
  if (!isValidPath(condition.path)) return false;
  const r = resolvePath(root, condition.path);
  if (condition.op === 'NotExists') return !r.found;
  if (!r.found) return false;
  if (condition.op === 'Exists') return true;
  return compareValues(condition.op, r.value, condition.value);
}
