/**
 * The run list stays a bounded index walk at any store size (issue #17, run_list_indexes):
 * for each filter, first page and a deep page, the plan of `listRunsQuery` reads one index in
 * the keyset order — no Sort over the tenant's rows, and the cursor is an index condition, not
 * a filter. Plans, not timings (the figures are `npm run bench:scale`); scans other than index
 * scans and sorts are priced out so the small test table answers as a large one would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { listRunsQuery, type RunFilter } from './run-reads';

let db: TestDatabase;
const DEF = '00000000-0000-4000-8000-000000000001';
beforeAll(async () => {
  db = await createTestDatabase();
  // 3000 runs of two tenants; ties in created_at (groups of 3) so the id tiebreak matters
  await db.pool.query(
    `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                       conversation_id, created_at, finished_at)
     SELECT md5('plan-' || i)::uuid, 't' || (i % 2),
            CASE WHEN i % 5 = 0 THEN $1::uuid ELSE md5('def-' || (i % 5))::uuid END, 1, '{}', '{}', 'h',
            CASE WHEN i % 10 = 0 THEN 'Failed' ELSE 'Completed' END, 0,
            CASE WHEN i % 7 = 0 THEN 'conv-' || (i % 3) END,
            now() - make_interval(secs => i / 3), now()
     FROM generate_series(1, 3000) i`,
    [DEF],
  );
  await db.pool.query('ANALYZE runs');
});
afterAll(async () => {
  await db.drop();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

async function plan(filter: RunFilter, after: { createdKey: string; id: string } | null): Promise<PlanNode[]> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    for (const off of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort', 'enable_incremental_sort'])
      await client.query(`SET LOCAL ${off} = off`);
    const q = listRunsQuery('t0', filter, 50, after);
    const res = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values);
    await client.query('ROLLBACK');
    return nodes(res.rows[0]!['QUERY PLAN'][0]!.Plan);
  } finally {
    client.release();
  }
}

const CASES: Array<[string, RunFilter, string]> = [
  ['no filter', {}, 'runs_tenant_created_idx'],
  ['status', { statuses: ['Failed'] }, 'runs_tenant_status_idx'],
  ['definitionId', { definitionId: DEF }, 'runs_tenant_definition_idx'],
  ['conversationId', { conversationId: 'conv-1' }, 'runs_tenant_conversation_idx'],
];

describe('listRunsQuery plans (run_list_indexes)', () => {
  it.each(CASES)('%s: one index in keyset order, the cursor an index condition', async (_name, filter, index) => {
    const cursor = (
      await db.pool.query<{ k: string; id: string }>(
        `SELECT created_key AS k, id FROM (${listRunsQuery('t0', filter, 1000, null).text}) x ORDER BY created_at DESC, id DESC OFFSET 20 LIMIT 1`,
        listRunsQuery('t0', filter, 1000, null).values,
      )
    ).rows[0]!;
    for (const after of [null, { createdKey: cursor.k, id: cursor.id }]) {
      const ns = await plan(filter, after);
      expect(ns.filter((n) => /Sort/.test(n['Node Type'])).map((n) => n['Node Type'])).toEqual([]);
      const scans = ns.filter((n) => n['Index Name']);
      expect(scans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', index]]);
      if (after) expect(scans[0]!['Index Cond']).toMatch(/ROW\(created_at, id\) </);
    }
  });
});
