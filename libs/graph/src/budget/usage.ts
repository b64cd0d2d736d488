/**
 * A run's rolled-up model usage and the budget verdict over it. Pure: the planner adds the
 * usage of each model attempt's output (`output.usage`, written by the LLM worker) and of
 * each child run when it ends, and judges the run's budget with the figures and the clock
 * reading it is given.
 */
import type { Json, JsonObject } from '../model';
import { isObject, typeName } from '../parse/util';
import { BUDGET_KINDS, type BudgetKind, type RunBudget } from './budget';

/** Price of one model, US dollars per million tokens. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** MODEL_PRICES: model name → price. */
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

/** What the run row stores (`runs.usage`). Attempts of the run itself are `runs.total_attempts`. */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  /** rounded to 1e-9 USD after each addition, so sums are reproducible */
  costUsd: number;
  /** tokens of models MODEL_PRICES names no price for (counted in the tokens, costed 0) */
  unpricedTokens: number;
  /** attempts of child runs (Loop iterations, Subworkflows) rolled in when each ended */
  childAttempts: number;
}

/** The usage a run summary shows (`usage` on GET /v1/runs/{id}) and the events carry. */
export interface UsageView {
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  unpricedTokens: number;
  attempts: number;
}

export const EMPTY_USAGE: RunUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0, unpricedTokens: 0, childAttempts: 0 };

/** The node kinds whose output carries `usage` (the LLM lane). */
export const USAGE_NODE_KINDS: ReadonlySet<string> = new Set(['LlmCall', 'Agent', 'DecisionModel']);

const roundUsd = (x: number) => Math.round(x * 1e9) / 1e9;
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * The price of `model`: its exact entry, else the longest entry `k` such that the model is
 * `k-<suffix>` (a provider answering "gpt-4o-mini-2024-07-18" for "gpt-4o-mini"); null when
 * none (the tokens count as unpriced).
 */
export function priceFor(prices: ModelPrices | undefined, model: string | null): ModelPrice | null {
  if (!prices || model === null) return null;
  if (Object.hasOwn(prices, model)) return prices[model]!;
  let best: string | null = null;
  for (const k of Object.keys(prices)) {
    if (model.startsWith(`${k}-`) && (best === null || k.length > best.length)) best = k;
  }
  return best === null ? null : prices[best]!;
}

/**
 * The usage of one model attempt from its output document (`output.usage` = { inputTokens,
 * outputTokens, totalTokens, model }): input and output tokens; when the provider reported
 * only a total, the total counts as input. Null when the output carries no usage.
 */
export function attemptUsage(output: Json, prices: ModelPrices | undefined): RunUsage | null {
  if (!isObject(output) || !isObject(output['usage'])) return null;
  const u = output['usage'];
  let inputTokens = count(u['inputTokens']);
  const outputTokens = count(u['outputTokens']);
  if (inputTokens === 0 && outputTokens === 0) inputTokens = count(u['totalTokens']);
  const model = typeof u['model'] === 'string' ? u['model'] : null;
  const price = priceFor(prices, model);
  const costUsd = price ? roundUsd((inputTokens * price.inputPerMTok + outputTokens * price.outputPerMTok) / 1e6) : 0;
  return { inputTokens, outputTokens, costUsd, unpricedTokens: price ? 0 : inputTokens + outputTokens, childAttempts: 0 };
}

export function addUsage(a: RunUsage, b: RunUsage): RunUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: roundUsd(a.costUsd + b.costUsd),
    unpricedTokens: a.unpricedTokens + b.unpricedTokens,
    childAttempts: a.childAttempts + b.childAttempts,
  };
}

/** A stored `runs.usage` value read leniently (absent or malformed members count 0). */
export function storedUsage(v: unknown): RunUsage {
  if (!isObject(v)) return { ...EMPTY_USAGE };
  const n = (k: keyof RunUsage) => (typeof v[k] === 'number' && Number.isFinite(v[k]) && (v[k] as number) >= 0 ? (v[k] as number) : 0);
  return { inputTokens: n('inputTokens'), outputTokens: n('outputTokens'), costUsd: n('costUsd'), unpricedTokens: n('unpricedTokens'), childAttempts: n('childAttempts') };
}

/** What a run summary shows: the stored usage plus the run's own attempts. */
export function usageView(usage: RunUsage | null | undefined, totalAttempts: number): UsageView {
  const u = usage ?? EMPTY_USAGE;
  return {
    tokens: u.inputTokens + u.outputTokens,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    costUsd: u.costUsd,
    unpricedTokens: u.unpricedTokens,
    attempts: totalAttempts + u.childAttempts,
  };
}

export const isUsageEmpty = (u: RunUsage): boolean =>
  u.inputTokens === 0 && u.outputTokens === 0 && u.costUsd === 0 && u.unpricedTokens === 0 && u.childAttempts === 0;

/** A budget the run went past: which, its limit, the figure, and the run's failure reason. */
export interface BudgetBreach {
  budget: BudgetKind;
  limit: number;
  used: number;
  reason: string;
}

const UNIT: Record<BudgetKind, string> = { maxTokens: 'tokens', maxCostUsd: 'USD', maxWallClockMs: 'ms', maxAttempts: 'attempts' };

export function breachOf(budget: BudgetKind, limit: number, used: number, verb = 'used'): BudgetBreach {
  return { budget, limit, used, reason: `budget ${budget} ${limit} exceeded: ${used} ${UNIT[budget]} ${verb}` };
}

/**
 * The first budget (in BUDGET_KINDS order) the figures go past, or null. `elapsedMs` is
 * null for a run not started yet. At the limit is within budget.
 */
export function budgetBreach(budget: RunBudget | null, view: UsageView, elapsedMs: number | null): BudgetBreach | null {
  if (!budget) return null;
  const used: Record<BudgetKind, number | null> = {
    maxTokens: view.tokens,
    maxCostUsd: view.costUsd,
    maxWallClockMs: elapsedMs,
    maxAttempts: view.attempts,
  };
  for (const k of BUDGET_KINDS) {
    const limit = budget[k];
    const u = used[k];
    if (limit !== undefined && u !== null && u > limit) return breachOf(k, limit, u);
  }
  return null;
}

/**
 * MODEL_PRICES as parsed JSON → the price table, or every problem (`MODEL_PRICES.<model>.inputPerMTok
 * must be a number ≥ 0`). Each entry needs both prices, finite and ≥ 0, and nothing else.
 */
export function parseModelPrices(v: unknown): { ok: true; prices: ModelPrices } | { ok: false; errors: string[] } {
  if (!isObject(v)) return { ok: false, errors: [`MODEL_PRICES must be a JSON object of model → { inputPerMTok, outputPerMTok }, not ${typeName(v)}`] };
  const errors: string[] = [];
  const prices: Record<string, ModelPrice> = {};
  for (const [model, p] of Object.entries(v)) {
    const at = `MODEL_PRICES.${model}`;
    if (model.trim() === '') errors.push('MODEL_PRICES has an empty model name');
    if (!isObject(p)) {
      errors.push(`${at} must be an object { inputPerMTok, outputPerMTok }, not ${typeName(p)}`);
      continue;
    }
    for (const k of Object.keys(p)) if (k !== 'inputPerMTok' && k !== 'outputPerMTok') errors.push(`${at} has an unknown member '${k}'`);
    for (const k of ['inputPerMTok', 'outputPerMTok'] as const) {
      const x = p[k];
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) errors.push(`${at}.${k} must be a number ≥ 0 (USD per million tokens)`);
    }
    prices[model] = { inputPerMTok: p['inputPerMTok'] as number, outputPerMTok: p['outputPerMTok'] as number };
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, prices };
}

/** The usage members events and summaries carry, as JSON. */
export const usageJson = (v: UsageView): JsonObject => ({ ...v });
