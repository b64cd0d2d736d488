/** The budget kinds and the `budget` member descriptions (graph member and start-request member). */
import type { MemberSpec } from '../spec/member';

export const BUDGET_KINDS = ['maxTokens', 'maxCostUsd', 'maxWallClockMs', 'maxAttempts'] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

/** A budget: each limit optional; an empty budget limits nothing. */
export type RunBudget = { [K in BudgetKind]?: number };

/** Members of a `budget` document (graph member and start-request member alike). */
export const BUDGET_MEMBER_SPECS: readonly MemberSpec[] = [
  {
    name: 'maxTokens', type: 'integer', required: false, min: 1, example: 100_000,
    help: 'Input plus output tokens of every model call of the run (LlmCall, Agent, DecisionModel), child runs included once they end.',
  },
  {
    name: 'maxCostUsd', type: 'number', required: false, min: 0, example: 2.5,
    help: "US dollars the run's model calls may cost, priced by the dispatcher's MODEL_PRICES (a model without a price costs 0).",
  },
  {
    name: 'maxWallClockMs', type: 'integer', required: false, min: 1, example: 600_000,
    help: 'Milliseconds since the run started (waits on people included); past it the run fails even when idle.',
  },
  {
    name: 'maxAttempts', type: 'integer', required: false, min: 1, example: 20,
    help: "Node attempts of the whole run (every queued attempt and child start, child runs' attempts included once they end).",
  },
];

