/**
 * `flowline_ms` (migration 0015): the epoch milliseconds of an instant, the same in every
 * session time zone and for instants before 1970, and inlined by the planner into the
 * queries that call it (a function the planner does not inline runs once per call).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('flowline_ms', () => {
  it('is the epoch milliseconds of the instant, floored, in any session time zone', async () => {
    const client = await db.pool.connect();
    try {
      for (const zone of ['UTC', 'America/St_Johns', 'Asia/Kathmandu']) {
        await client.query(`SET TIME ZONE '${zone}'`);
        const r = await client.query<{ ms: string; want: string }>(
          `SELECT flowline_ms(t)::text AS ms, floor(extract(epoch FROM t) * 1000)::bigint::text AS want
           FROM (VALUES ('2026-12-04 00:15:00.123456+00'::timestamptz), ('1969-12-31 23:59:59.9995+05'),
                        ('2026-03-29 01:30:00+01'), (now())) v(t)`,
        );
        for (const row of r.rows) expect(row.ms).toBe(row.want);
      }
      const fixed = await client.query<{ ms: string }>(`SELECT flowline_ms('1970-01-01 00:00:01.5+00')::text AS ms`);
      expect(fixed.rows[0]!.ms).toBe('1500');
      expect((await client.query(`SELECT flowline_ms(NULL) AS ms`)).rows[0].ms).toBeNull();
    } finally {
      await client.query('RESET TIME ZONE');
      client.release();
    }
  });

  it('is inlined: the plan shows its expression, not a call', async () => {
    const plan = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (VERBOSE, COSTS OFF) SELECT flowline_ms(clock_timestamp())`);
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).not.toContain('flowline_ms');
    expect(text).toContain('EXTRACT');
  });
});
