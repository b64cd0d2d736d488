/**
 * The model's status sets as SQL literal lists, for statements that test a status with
 * `IN (…)`: the sets are imported from libs/graph, never restated in SQL text. Statuses are
 * fixed identifiers (letters only), so quoting them needs no escaping.
 */
import { TERMINAL_RUN_STATUSES } from '@flowline/graph';

function sqlList(values: Iterable<string>): string {
  return [...values].map((v) => `'${v}'`).join(', ');
}

/** `'Completed', 'Failed', 'Cancelled'`: the terminal run statuses of the model. */
export const TERMINAL_RUN_STATUSES_SQL = sqlList(TERMINAL_RUN_STATUSES);
