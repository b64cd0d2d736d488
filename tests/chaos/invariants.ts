/**
 * The invariants of a chaos run, read from the database and the event log after the
 * workload settled. Each check is one SQL query returning a count of violations.
 */
import type { Pool } from '@flowline/db';
import type { PostedRun } from './workload';

export interface Violations {
  /** a POST answered 202 but no such run exists */
  runsLost: number;
  /** runs not terminal, or terminal later than `terminalWithinMs` after the last fault */
  runsNotTerminalInTime: number;
  /** runs whose terminal events are not exactly one, or do not match the run's status */
  terminalTransitionsNotOne: number;
  /** (run, seq) pairs present more than once */
  duplicateSeq: number;
  /** runs whose seqs are not exactly 1..last_seq */
  seqGaps: number;
  /** invocation ids with more than one node.started (or more than one node.queued) */
  invocationStartedTwice: number;
  /** (run, node, attempt) with more than one node.completed/node.failed */
  duplicateNodeOutcomes: number;
  /** succeeded effect nodes whose invocation has not exactly one effect row of the same attempt and run */
  effectsNotOnce: number;
}

export interface Observations {
  statuses: Record<string, number>;
  /** slowest run: POST (created_at) to its terminal event, ms */
  maxRunToTerminalMs: number;
  p50RunToTerminalMs: number;
  p99RunToTerminalMs: number;
  /** longest wait from POST to run.started (tenant slot queue included), ms */
  maxRunToStartMs: number;
  /** last terminal event after the last fault, ms (negative: all done before it) */
  lastTerminalAfterLastFaultMs: number;
  interruptions: number;
  retries: number;
  effects: number;
  executions: number;
  /** executions beyond the first of the same invocation id (at-least-once re-deliveries) */
  reExecutions: number;
}

const TERMINAL = "('run.completed','run.failed','run.cancelled')";

async function count(pool: Pool, sql: string, params: unknown[] = []): Promise<number> {
  const r = await pool.query<{ n: number }>(sql, params);
  return r.rows[0]?.n ?? 0;
}

/** Every violation count (all zero when the engine held its guarantees). */
export async function checkInvariants(pool: Pool, posted: PostedRun[], lastFaultAt: number, terminalWithinMs: number): Promise<Violations> {
  const ids = posted.map((p) => p.runId);
  const deadline = new Date(lastFaultAt + terminalWithinMs);
  return {
    runsLost: await count(pool, 'select count(*)::int as n from unnest($1::uuid[]) as p(id) where not exists (select 1 from runs r where r.id = p.id)', [ids]),
    runsNotTerminalInTime: await count(
      pool,
      `select count(*)::int as n from runs r
        where r.status not in ('Completed','Failed','Cancelled')
           or not exists (select 1 from events e where e.run_id = r.id and e.kind in ${TERMINAL} and e.at <= $1)`,
      [deadline],
    ),
    terminalTransitionsNotOne: await count(
      pool,
      `select count(*)::int as n from runs r
        where (select count(*) from events e where e.run_id = r.id and e.kind in ${TERMINAL}) <> 1
           or (r.status in ('Completed','Failed','Cancelled') and not exists (
                select 1 from events e where e.run_id = r.id and e.kind = 'run.' || lower(r.status)))`,
    ),
    duplicateSeq: await count(pool, 'select count(*)::int as n from (select 1 from events group by run_id, seq having count(*) > 1) d'),
    seqGaps: await count(
      pool,
      `select count(*)::int as n from runs r
         left join (select run_id, count(*) as c, min(seq) as lo, max(seq) as hi from events group by run_id) e on e.run_id = r.id
        where e.c is null or e.lo <> 1 or e.hi <> e.c or e.hi <> r.last_seq`,
    ),
    invocationStartedTwice: await count(
      pool,
      `select count(*)::int as n from (
         select kind, detail->>'invocationId' from events
          where kind in ('node.started','node.queued') and detail ? 'invocationId'
          group by 1, 2 having count(*) > 1) d`,
    ),
    duplicateNodeOutcomes: await count(
      pool,
      `select count(*)::int as n from (
         select run_id, node_key, detail->>'attempt' from events
          where kind in ('node.completed','node.failed')
          group by 1, 2, 3 having count(*) > 1) d`,
    ),
    effectsNotOnce: await count(
      pool,
      `select count(*)::int as n from node_runs nr join runs r on r.id = nr.run_id
        where nr.node_key like 'fx\\_%' and nr.status = 'Succeeded'
          and (select count(*) from chaos.effects f
                where f.invocation_id = nr.invocation_id and f.attempt = nr.attempt
                  and f.node_key = nr.node_key and f.run_tag = r.request_id) <> 1`,
    ),
  };
}

/** Figures that describe the run but are not violations. */
export async function observe(pool: Pool, lastFaultAt: number): Promise<Observations> {
  const statuses: Record<string, number> = {};
  for (const row of (await pool.query<{ status: string; n: number }>('select status, count(*)::int as n from runs group by 1 order by 1')).rows) {
    statuses[row.status] = row.n;
  }
  const t = await pool.query<{ max_ms: number | null; p50: number | null; p99: number | null; last_at: Date | null }>(
    `select max(d)::float8 as max_ms, percentile_cont(0.5) within group (order by d)::float8 as p50,
            percentile_cont(0.99) within group (order by d)::float8 as p99, max(at) as last_at
       from (select extract(epoch from (e.at - r.created_at)) * 1000 as d, e.at
               from runs r join events e on e.run_id = r.id and e.kind in ${TERMINAL}) x`,
  );
  const s = await pool.query<{ max_ms: number | null }>(
    `select max(extract(epoch from (e.at - r.created_at)) * 1000)::float8 as max_ms
       from runs r join events e on e.run_id = r.id and e.kind = 'run.started'`,
  );
  const lastAt = t.rows[0]?.last_at?.getTime() ?? lastFaultAt;
  const ex = await pool.query<{ total: number; distinct_ids: number }>(
    'select count(*)::int as total, count(distinct invocation_id)::int as distinct_ids from chaos.executions',
  );
  return {
    statuses,
    maxRunToTerminalMs: Math.round(t.rows[0]?.max_ms ?? 0),
    p50RunToTerminalMs: Math.round(t.rows[0]?.p50 ?? 0),
    p99RunToTerminalMs: Math.round(t.rows[0]?.p99 ?? 0),
    maxRunToStartMs: Math.round(s.rows[0]?.max_ms ?? 0),
    lastTerminalAfterLastFaultMs: lastAt - lastFaultAt,
    interruptions: await count(pool, "select count(*)::int as n from events where kind = 'node.interrupted'"),
    retries: await count(pool, "select count(*)::int as n from events where kind = 'node.retried'"),
    effects: await count(pool, 'select count(*)::int as n from chaos.effects'),
    executions: ex.rows[0]?.total ?? 0,
    reExecutions: (ex.rows[0]?.total ?? 0) - (ex.rows[0]?.distinct_ids ?? 0),
  };
}
