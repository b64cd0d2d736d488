/**
 * Run budgets: optional limits on a whole run's tokens, cost, wall-clock and
 * node attempts, given on the definition (graph member `budget`) and on the start request
 * (`budget` in POST /v1/runs). The run's effective budget is, per field, the stricter of
 * the two. A limit is exceeded when the figure goes past it (`used > limit`): a run that
 * uses exactly its limit is within budget.
 */
import { isObject, typeName } from '../parse/util';
import { compileMembers } from '../parse/member-check';
import { BUDGET_KINDS, BUDGET_MEMBER_SPECS, type BudgetKind, type RunBudget } from './budget-spec';

export { BUDGET_KINDS, BUDGET_MEMBER_SPECS, type BudgetKind, type RunBudget } from './budget-spec';

const CHECKS = compileMembers(BUDGET_MEMBER_SPECS).checks;

/**
 * A `budget` document → the budget (null when absent/null or empty), or the error
 * messages, each naming the member (`budget.maxTokens must be …`).
 */
export function parseBudget(v: unknown, where = 'budget'): { ok: true; budget: RunBudget | null } | { ok: false; errors: string[] } {
  if (v === undefined || v === null) return { ok: true, budget: null };
  if (!isObject(v)) return { ok: false, errors: [`${where} must be an object, not ${typeName(v)}`] };
  const errors: string[] = [];
  const budget: RunBudget = {};
  for (const [k, value] of Object.entries(v)) {
    const check = CHECKS.get(k);
    if (!check) {
      errors.push(`${where} has an unknown member '${k}' (allowed: ${BUDGET_KINDS.join(', ')})`);
      continue;
    }
    if (value === null) continue;
    const r = check(value);
    if ('error' in r) errors.push(`${where}.${k} ${r.error}`);
    else budget[k as BudgetKind] = r.value as number;
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, budget: Object.keys(budget).length > 0 ? budget : null };
}

/** Per field the stricter (smaller) of two budgets; null when neither limits anything. */
export function effectiveBudget(a: RunBudget | null | undefined, b: RunBudget | null | undefined): RunBudget | null {
  const out: RunBudget = {};
  for (const k of BUDGET_KINDS) {
    const x = a?.[k];
    const y = b?.[k];
    if (x === undefined && y === undefined) continue;
    out[k] = x === undefined ? y! : y === undefined ? x : Math.min(x, y);
  }
  return Object.keys(out).length > 0 ? out : null;
}
