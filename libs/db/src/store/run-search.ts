/**
 * The WHERE conditions of a run search (libs/graph `RunSearch`) over `runs r`,
 * shared by the runs list and by bulk actions (their count and their snapshot), so a dry
 * run, a submission and a list page with one filter select the same runs.
 */
import type { RunSearch } from '@flowline/graph';

/**
 * Appends the search's values to `params` and returns its conditions ANDed (`TRUE` for an
 * empty search). Each condition is sargable on the runs indexes: tenant + created
 * (keyset), tenant + status, definition, tenant + conversation, the GIN index on
 * `metadata` for containment (`@>`), and the primary key for a run id or an id prefix.
 * Free text alone is not: it filters the rows the other conditions reach (see textSql).
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
  if (search.text !== undefined) where.push(textSql(search.text, p));
  return where.length === 0 ? 'TRUE' : where.join(' AND ');
}

/**
 * The condition of the free text `q`: an id is the primary key, an id prefix a range on it
 * (uuid order is the order of its hex text). Text is an ILIKE substring of the definition's
 * name (one primary-key probe of `definitions` per row read) or id, the run's reason or
 * failure class, or a metadata pair as `key:value`; no index serves it, so the list reads the
 * tenant's runs newest first through its created index and stops once the page is full: a
 * rare text costs a scan of the tenant's runs in the other members' range.
 */
function textSql(text: NonNullable<RunSearch['text']>, p: (v: unknown) => string): string {
  if (text.kind === 'id') return `r.id = ${p(text.id)}::uuid`;
  if (text.kind === 'idPrefix') return `r.id BETWEEN ${p(text.low)}::uuid AND ${p(text.high)}::uuid`;
  const like = p(text.pattern);
  return `(r.reason ILIKE ${like} OR r.failure_class ILIKE ${like} OR r.definition_id::text ILIKE ${like}
    OR EXISTS (SELECT 1 FROM definitions d WHERE d.id = r.definition_id AND d.name ILIKE ${like})
    OR EXISTS (SELECT 1 FROM jsonb_each_text(r.metadata) m WHERE m.key || ':' || m.value ILIKE ${like}))`;
}
