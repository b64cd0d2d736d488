/**
 * The WHERE conditions of a run search (libs/graph `RunSearch`) over `runs r`,
 * shared by the runs list and by bulk actions (their count and their snapshot), so a dry
 * run, a submission and a list page with one filter select the same runs.
 */
import type { RunSearch } from '@flowline/graph';

/**
 * Appends the search's values to `params` and returns its conditions ANDed (`TRUE` for an
 * empty search). Each condition is sargable on the runs indexes: tenant + created
 * (keyset), tenant + status, definition, tenant + conversation, and the GIN index on
 * `metadata` for containment (`@>`).
 */
export function runSearchSql(search: RunSearch, params: unknown[]): string {
  const where: string[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (search.definitionId !== undefined) where.push(`r.definition_id = ${p(search.definitionId)}::uuid`);
  if (search.definitionVersion !== undefined) where.push(`r.definition_version = ${p(search.definitionVersion)}::int`);
  if (search.statuses !== undefined) {
    where.push(search.statuses.length === 1 ? `r.status = ${p(search.statuses[0])}::text` : `r.status = ANY(${p(search.statuses)}::text[])`);
  }
  if (search.failureClass !== undefined) where.push(`r.failure_class = ${p(search.failureClass)}::text`);
  if (search.metadata !== undefined) where.push(`r.metadata @> ${p(JSON.stringify(search.metadata))}::jsonb`);
  if (search.createdAfter !== undefined) where.push(`r.created_at >= ${p(search.createdAfter)}::timestamptz`);
  if (search.createdBefore !== undefined) where.push(`r.created_at < ${p(search.createdBefore)}::timestamptz`);
  if (search.finishedAfter !== undefined) where.push(`r.finished_at >= ${p(search.finishedAfter)}::timestamptz`);
  if (search.finishedBefore !== undefined) where.push(`r.finished_at < ${p(search.finishedBefore)}::timestamptz`);
  if (search.conversationId !== undefined) where.push(`r.conversation_id = ${p(search.conversationId)}::text`);
  return where.length === 0 ? 'TRUE' : where.join(' AND ');
}
