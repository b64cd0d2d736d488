/**
 * Deployment tool module for the chaos suite (loaded through TOOL_MODULES): `chaos_effect`
 * records its side effect in the private Postgres named by CHAOS_EFFECTS_URL.
 * Contract: idempotent per invocation id — `chaos.effects` keeps one row per invocation
 * (a re-delivery of the same invocation adds nothing), while `chaos.executions` logs every
 * execution so at-least-once re-runs stay visible as a figure.
 */
import pg from 'pg';
import type { ToolDefinition } from '@flowline/tools';

/** DDL of the tables this tool writes (the harness creates them before the cluster starts). */
export const CHAOS_SCHEMA_SQL = `
create schema if not exists chaos;
create table if not exists chaos.effects (
  invocation_id uuid primary key,
  run_tag text not null,
  node_key text not null,
  attempt int not null,
  at timestamptz not null default clock_timestamp()
);
create table if not exists chaos.executions (
  invocation_id uuid not null,
  run_tag text not null,
  node_key text not null,
  attempt int not null,
  at timestamptz not null default clock_timestamp()
);
create index if not exists executions_invocation_idx on chaos.executions (invocation_id);
`;

let pool: pg.Pool | null = null;

function poolOf(): pg.Pool {
  if (pool) return pool;
  // Read once, at first use: the API process loads this module too but never runs the tool.
  const url = process.env.CHAOS_EFFECTS_URL;
  if (!url) throw new Error('CHAOS_EFFECTS_URL is not set');
  pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
  // A Postgres restart kills idle clients; the next query opens a new one.
  pool.on('error', () => undefined);
  return pool;
}

/** Closes the pool (tests; the worker process never needs to). */
export async function endEffectsPool(): Promise<void> {
  const p = pool;
  pool = null;
  await p?.end();
}

export const chaosEffectTool: ToolDefinition = {
  name: 'chaos_effect',
  description: 'Chaos test tool: records one effect per invocation id in chaos.effects (idempotent) and logs the execution.',
  argumentsSchema: {
    type: 'object',
    properties: { tag: { type: 'string', minLength: 1 }, node: { type: 'string', minLength: 1 } },
    required: ['tag', 'node'],
    additionalProperties: false,
  },
  requiresAllowedUrls: false,
  run: async (args, ctx) => {
    const tag = args.tag as string;
    const node = args.node as string;
    const client = await poolOf().connect();
    let broken = false;
    // The pool listens for errors on idle clients only. A Postgres restart while this call
    // holds the client makes pg emit 'error' on it (besides failing the query in flight):
    // unheard, that event would crash the worker process. The client is then discarded.
    const onError = () => {
      broken = true;
    };
    client.on('error', onError);
    try {
      await client.query('begin');
      await client.query('insert into chaos.executions (invocation_id, run_tag, node_key, attempt) values ($1, $2, $3, $4)', [
        ctx.invocationId,
        tag,
        node,
        ctx.attempt,
      ]);
      const r = await client.query(
        'insert into chaos.effects (invocation_id, run_tag, node_key, attempt) values ($1, $2, $3, $4) on conflict (invocation_id) do nothing',
        [ctx.invocationId, tag, node, ctx.attempt],
      );
      await client.query('commit');
      return { recorded: r.rowCount === 1, attempt: ctx.attempt };
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  },
};

export const tools: ToolDefinition[] = [chaosEffectTool];
