/**
 * `npm run bench:scale` (figures at scale; not part of `npm test`): run lists and blockers
 * with millions of terminal runs in the store, and W1 while the retention pruner deletes a
 * million expired runs.
 *
 *   npm run bench:scale -- [--quick] [--runs N] [--node-runs K] [--events E] [--tenants T]
 *                          [--prune-runs N] [--only lists,prune] [--keep] [--reuse] [--pg URL]
 *
 * lists: creates its own database `flowline_scale` on the Postgres of --pg (default the local
 * 127.0.0.1:5432), migrates it (libs/db migrate), starts a bench cluster on it (API,
 * dispatcher, tool worker; own redis-server; API_KEYS of T tenants), creates definitions
 * through the API, then generates N terminal runs ENTIRELY in SQL (generate_series, INSERT …
 * SELECT in chunks; K node_runs and E events per run; half of them the measured tenant t0's,
 * spread over definitions, statuses, conversations and 180 days of created/finished times).
 * The bulk load drops the tables' indexes and rebuilds them after (as a restore would), then
 * VACUUM ANALYZE. It prints EXPLAIN (ANALYZE, BUFFERS) of each list query (the exact
 * statement of libs/db `listRunsQuery`), then measures through the REAL API with t0's key:
 * `GET /v1/runs?limit=50` with each filter (none, status, definitionId, conversationId), the
 * first page and a deep page (a cursor taken ~10% deep into the filter's rows), sequential and
 * 4 concurrent; and `GET /v1/runs/{id}/blockers` on live runs (parked at a Pause gate, started
 * through the API among the N). Targets: list p95 ≤ 50 ms, blockers p95 ≤ 20 ms.
 *
 * prune: database `flowline_scale_prune` holding --prune-runs expired terminal runs (finished
 * 60–90 days ago); W1 (a 100-node echo chain, `--w1-reps` runs, pickup → pickup hops) on a
 * cluster without retention, then on the same database with a cluster whose dispatchers run
 * the pruner (RETENTION_DAYS=30; RETENTION_BATCH_SIZE / _PAUSE_MS their defaults unless
 * BENCH_CLUSTER_ENV says otherwise) while it deletes them. Prints both hop p99 and the ratio
 * (target ≤ 2×), and how many runs the pruner deleted during the measurement.
 *
 * Both databases are dropped at the end unless --keep. `--reuse` (lists only; implies --keep)
 * measures again on a `flowline_scale` kept by an earlier `--keep` run instead of generating.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { encodePageCursor, listRunsQuery, migrate, createPool, type RunFilter } from '@flowline/db';
import { LOCAL_PG } from '@flowline/testing';
import { databaseUrl, startRedis, freshDatabase } from './lib/infra';
import { Api, startBenchCluster, type BenchCluster } from './lib/flowline';
import { chain, parked } from './lib/graphs';
import { percentile, sleep } from './lib/stats';
import { Monitor } from './lib/cost';
import { chainHops, w1 } from './lib/workloads';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    'node-runs': { type: 'string', default: '3' },
    events: { type: 'string' },
    tenants: { type: 'string', default: '8' },
    'prune-runs': { type: 'string' },
    'w1-reps': { type: 'string' },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    pg: { type: 'string', default: LOCAL_PG },
    samples: { type: 'string' },
  },
  allowPositionals: false,
});

const quick = flags.quick;
const N = Number(flags.runs ?? (quick ? 200_000 : 10_000_000));
const K = Number(flags['node-runs']);
const E = Number(flags.events ?? String(2 * K + 3));
const T = Number(flags.tenants);
const PRUNE_N = Number(flags['prune-runs'] ?? (quick ? 100_000 : 1_000_000));
const W1_REPS = Number(flags['w1-reps'] ?? (quick ? 3 : 5));
const SAMPLES = Number(flags.samples ?? (quick ? 100 : 200));
const DEFS_PER_TENANT = 5;
const CHUNK = 1_000_000;
const only = flags.only ? new Set(flags.only.split(',')) : null;
const want = (s: string) => !only || only.has(s);
for (const [k, v] of Object.entries({ N, K, E, T, PRUNE_N, W1_REPS, SAMPLES }))
  if (!Number.isInteger(v) || v < (k === 'K' || k === 'E' ? 0 : 1)) throw new Error(`bad ${k}: ${v}`);

const t0 = Date.now();
const log = (s: string) =>
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)} +${((Date.now() - t0) / 1000).toFixed(0)}s] ${s}\n`);
const out = (s: string) => process.stdout.write(`${s}\n`);
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

async function dropDatabase(name: string): Promise<void> {
  const c = new pg.Client({ connectionString: flags.pg });
  await c.connect();
  await c.query(`drop database if exists "${name}" with (force)`).finally(() => c.end());
}

async function dbSize(db: pg.Pool): Promise<string> {
  const r = await db.query<{ s: string; runs: string; nr: string; ev: string }>(
    `select pg_size_pretty(pg_database_size(current_database())) s,
            pg_size_pretty(pg_total_relation_size('runs')) runs,
            pg_size_pretty(pg_total_relation_size('node_runs')) nr,
            pg_size_pretty(pg_total_relation_size('events')) ev`,
  );
  const x = r.rows[0]!;
  return `database ${x.s} (runs ${x.runs}, node_runs ${x.nr}, events ${x.ev})`;
}

// ------------------------------------------------------------------ generation (SQL only)

/** Secondary indexes and primary keys of the bulk-loaded tables, to rebuild after the load. */
async function dropIndexes(db: pg.Pool, tables: string[]): Promise<string[]> {
  const cons = await db.query<{ t: string; name: string; def: string }>(
    `select conrelid::regclass::text t, conname name, pg_get_constraintdef(oid) def
       from pg_constraint where conrelid = any($1::regclass[]) and contype = 'p'`,
    [tables],
  );
  const idx = await db.query<{ name: string; def: string }>(
    `select indexname name, indexdef def from pg_indexes
      where tablename = any($1::text[]) and schemaname = 'public'
        and indexname not in (select conname from pg_constraint where contype = 'p')`,
    [tables],
  );
  const rebuild: string[] = [];
  for (const c of cons.rows) {
    await db.query(`alter table ${c.t} drop constraint "${c.name}"`);
    rebuild.push(`alter table ${c.t} add constraint "${c.name}" ${c.def}`);
  }
  for (const i of idx.rows) {
    await db.query(`drop index "${i.name}"`);
    rebuild.push(i.def);
  }
  return rebuild;
}

/*
 * Run i (0-based) of the generation: id md5('scale-run-' || i) (uniformly random like a v4),
 * tenant t0 for even i (half the store: the measured tenant), else t1..t{T-1}; definition
 * (i / T) % DEFS of its tenant; status 80% Completed, 15% Failed, 5% Cancelled; 10% carry a
 * conversation id (conv-<tenant>-<i % 20000>); created_at spread evenly over [start, start +
 * span) with a per-run jitter, finished 1–600 s later. Inputs: $1 first i, $2 last i + 1, $3 N,
 * $4 start (timestamptz), $5 span seconds.
 */
function runsInsert(tenants: number): string {
  return `
insert into runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, failure_class,
                  reason, version, last_seq, shard, input, output, conversation_id, total_attempts, created_at, started_at, finished_at)
select md5('scale-run-' || g.i)::uuid, d.tenant_id, d.id, 1, d.graph, d.plan_graph, d.graph_hash, s.status,
       case s.status when 'Failed' then 'NodeFailed' else 'None' end,
       case s.status when 'Failed' then 'node t${K} failed: echo refused' when 'Cancelled' then 'cancelled by operator' end,
       ${E}, ${E}, g.i % 16, jsonb_build_object('n', g.i, 'customer', 'c-' || (g.i % 5000)),
       case s.status when 'Completed' then jsonb_build_object('ok', true, 'n', g.i) end,
       case when g.i % 20 in (3, 4) then 'conv-' || d.tenant_id || '-' || (g.i % 20000) end,
       ${K}, c.at, c.at + interval '40 ms', c.at + make_interval(secs => 1 + g.i % 600)
from generate_series($1::bigint, $2::bigint - 1) as g(i)
cross join lateral (select case when g.i % 2 = 0 then 't0' else 't' || (1 + (g.i / 2) % ${Math.max(1, tenants - 1)}) end as tenant) t
join scale_defs d on d.tenant_id = t.tenant and d.n = (g.i / ${tenants}) % ${DEFS_PER_TENANT}
cross join lateral (select case when g.i % 100 < 80 then 'Completed' when g.i % 100 < 95 then 'Failed' else 'Cancelled' end as status) s
cross join lateral (select $4::timestamptz + make_interval(secs => g.i::float8 * $5::float8 / $3::float8 + (g.i % 7) * 0.013) as at) c`;
}

/* Run i's status and created_at, as runsInsert computes them (node_runs and events are generated from i too, never by reading runs). */
const STATUS_OF_I = `(case when g.i % 100 < 80 then 'Completed' when g.i % 100 < 95 then 'Failed' else 'Cancelled' end)`;
const AT_OF_I = `($4::timestamptz + make_interval(secs => g.i::float8 * $5::float8 / $3::float8 + (g.i % 7) * 0.013))`;

const nodeRunsInsert = () => `
insert into node_runs (run_id, node_key, kind, status, attempt, attempt_limit, invocation_id, failure_class, reason,
                       input, output, queued_at, started_at, finished_at)
select md5('scale-run-' || g.i)::uuid, 't' || k, 'Tool',
       case when r.status = 'Failed' and k = ${K} then 'Failed' when r.status = 'Cancelled' and k = ${K} then 'Cancelled' else 'Succeeded' end,
       1, 3, md5('scale-inv-' || g.i || '-' || k)::uuid,
       case when r.status = 'Failed' and k = ${K} then 'NodeFailed' else 'None' end,
       case when r.status = 'Failed' and k = ${K} then 'echo refused' end,
       jsonb_build_object('n', k), case when r.status = 'Completed' or k < ${K} then jsonb_build_object('echo', k) end,
       r.at + make_interval(secs => 0.04 + k * 0.002), r.at + make_interval(secs => 0.04 + k * 0.003),
       r.at + make_interval(secs => 0.04 + k * 0.004)
from generate_series($1::bigint, $2::bigint - 1) as g(i)
cross join lateral (select ${STATUS_OF_I} as status, ${AT_OF_I} as at) r
cross join generate_series(1, ${K}) k`;

const eventsInsert = () => `
insert into events (run_id, seq, kind, node_key, at, detail)
select md5('scale-run-' || g.i)::uuid, e,
       case when e = 1 then 'run.created' when e = 2 then 'run.started'
            when e = ${E} then case r.status when 'Completed' then 'run.completed' when 'Failed' then 'run.failed' else 'run.cancelled' end
            when e % 2 = 1 then 'node.started' else 'node.completed' end,
       case when e > 2 and e < ${E} then 't' || ((e - 1) / 2) end,
       r.at + make_interval(secs => e * 0.001),
       case when e = ${E} and r.status <> 'Completed' then jsonb_build_object('reason', r.status) else '{}'::jsonb end
from generate_series($1::bigint, $2::bigint - 1) as g(i)
cross join lateral (select ${STATUS_OF_I} as status, ${AT_OF_I} as at) r
cross join generate_series(1, ${E}) e`;

/** Generates `n` terminal runs (run ids md5('scale-run-' || i), i from `from`) with their node_runs and events. */
async function generate(db: pg.Pool, n: number, start: Date, spanSeconds: number, tenants: number, from = 0): Promise<void> {
  const began = Date.now();
  const rebuild = await dropIndexes(db, ['runs', 'node_runs', 'events']);
  log(`dropped ${rebuild.length} indexes/keys for the load`);
  const chunk = Math.min(CHUNK, Math.max(10_000, Math.ceil(n / 10)));
  for (let lo = from; lo < from + n; lo += chunk) {
    const hi = Math.min(from + n, lo + chunk);
    const t = Date.now();
    await db.query(runsInsert(tenants), [lo, hi, n + from, start, spanSeconds]);
    if (K > 0) await db.query(nodeRunsInsert(), [lo, hi, n + from, start, spanSeconds]);
    if (E > 0) await db.query(eventsInsert(), [lo, hi, n + from, start, spanSeconds]);
    log(`generated runs ${lo}..${hi - 1} of ${from + n} (${((Date.now() - t) / 1000).toFixed(1)} s; load ${load()})`);
  }
  const t = Date.now();
  for (const def of rebuild) await db.query(def);
  log(`rebuilt ${rebuild.length} indexes/keys in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const v = Date.now();
  await db.query('vacuum analyze runs');
  await db.query('analyze node_runs');
  await db.query('analyze events');
  log(`vacuum analyze ${((Date.now() - v) / 1000).toFixed(1)} s; generation total ${((Date.now() - began) / 1000).toFixed(0)} s`);
}

/** Definitions of every tenant through the API (so runs pin real, sealed-if-configured graphs), copied to scale_defs. */
async function createDefinitions(url: string, db: pg.Pool, tenants: number): Promise<Record<string, string[]>> {
  const byTenant: Record<string, string[]> = {};
  for (let t = 0; t < tenants; t++) {
    const api = new Api(url, `key-t${t}`);
    byTenant[`t${t}`] = [];
    for (let d = 0; d < DEFS_PER_TENANT; d++) byTenant[`t${t}`]!.push(await api.createDefinition(`scale-t${t}-d${d}`, chain(K || 1)));
  }
  await db.query('drop table if exists scale_defs');
  await db.query(
    `create table scale_defs as
       select d.tenant_id, (row_number() over (partition by d.tenant_id order by d.created_at, d.id) - 1)::int as n,
              d.id, d.graph, d.plan_graph, d.graph_hash
         from definitions d where d.name like 'scale-%'`,
  );
  return byTenant;
}

// ------------------------------------------------------------------ measurement

interface Lat {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

const lat = (xs: number[]): Lat => ({
  n: xs.length,
  p50: percentile(xs, 50),
  p95: percentile(xs, 95),
  p99: percentile(xs, 99),
  max: Math.max(...xs),
});

async function timedGet(base: string, key: string, path: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${body.slice(0, 200)}`);
  return ms;
}

/** `samples` requests one after another, then `samples` more from `conc` concurrent loops. */
async function measure(base: string, key: string, paths: string[], samples: number, conc = 4): Promise<{ seq: Lat; conc: Lat }> {
  for (const p of paths.slice(0, 5)) await timedGet(base, key, p); // warm-up
  const seq: number[] = [];
  for (let i = 0; i < samples; i++) seq.push(await timedGet(base, key, paths[i % paths.length]!));
  const par: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next < samples) {
        const i = next++;
        par.push(await timedGet(base, key, paths[i % paths.length]!));
      }
    }),
  );
  return { seq: lat(seq), conc: lat(par) };
}

const f = (x: number) => x.toFixed(1);
const row = (name: string, m: { seq: Lat; conc: Lat }) =>
  `| ${name} | ${f(m.seq.p50)} | ${f(m.seq.p95)} | ${f(m.seq.p99)} | ${f(m.conc.p50)} | ${f(m.conc.p95)} | ${f(m.conc.p99)} |`;

async function listsPhase(): Promise<void> {
  const name = 'flowline_scale';
  const reuse = flags.reuse;
  const url = reuse ? databaseUrl(flags.pg!, name) : await freshDatabase(flags.pg!, name, false);
  const db = new pg.Pool({ connectionString: url, max: 4, application_name: 'flowline-scale' });
  let cluster: BenchCluster | null = null;
  const redis = await startRedis();
  try {
    const apiKeys = Array.from({ length: T }, (_, t) => `t${t}:key-t${t}`).join(',');
    const env = { API_KEYS: apiKeys, MAX_CONCURRENT_RUNS: '100' };
    let defs: Record<string, string[]>;
    if (reuse) {
      const r = await db.query<{ tenant_id: string; ids: string[] }>(
        `select tenant_id, array_agg(id order by n) ids from scale_defs group by tenant_id`,
      );
      defs = Object.fromEntries(r.rows.map((x) => [x.tenant_id, x.ids]));
      const runs = (await db.query<{ n: string }>(`select count(*) n from runs`)).rows[0]!.n;
      log(`reusing ${name}: ${Number(runs).toLocaleString('en-US')} runs`);
      out(`\n## Scale: ${Number(runs).toLocaleString('en-US')} runs (kept database, measured again; ${T} tenants, t0 holds half)\n`);
      out(`- ${await dbSize(db)}`);
    } else {
      const pool = createPool(url, { max: 2, applicationName: 'flowline-scale-migrate' });
      await migrate(pool);
      await pool.end();
      // the cluster is down during the load: its pollers would scan the tables while their indexes are dropped
      cluster = await startBenchCluster(url, redis.url, 1, env);
      defs = await createDefinitions(cluster.cluster.apiUrl, db, T);
      await cluster.close();
      cluster = null;
      log(`definitions created (${T} tenants × ${DEFS_PER_TENANT}); generating ${N} runs, ${K} node_runs and ${E} events each`);
      const genStart = Date.now();
      const span = 180 * 86_400;
      await generate(db, N, new Date(Date.now() - span * 1000 - 3_600_000), span, T);
      const genS = (Date.now() - genStart) / 1000;
      out(`\n## Scale: ${N.toLocaleString('en-US')} runs (${K} node_runs, ${E} events each; ${T} tenants, t0 holds half)\n`);
      out(`- generation (SQL, indexes rebuilt after, vacuum analyze): ${genS.toFixed(0)} s; ${await dbSize(db)}`);
    }
    cluster = await startBenchCluster(url, redis.url, 1, env);
    const base = cluster.cluster.apiUrl;

    // live runs among them: parked at a Pause gate, started through the API with t0's key
    const api = new Api(base, 'key-t0');
    const parkedDef = await api.createDefinition('scale-parked', parked());
    const live: string[] = [];
    for (let i = 0; i < 5; i++) live.push(await api.startRun(parkedDef, { i }));
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await db.query<{ n: number }>(
        `select count(*)::int n from node_runs where run_id = any($1::uuid[]) and node_key = 'review' and pending_decision_kind is not null`,
        [live],
      );
      if (r.rows[0]!.n === live.length) break;
      if (Date.now() > until) throw new Error('live runs did not park at their gate within 60 s');
      await sleep(100);
    }

    // the filters, each with a deep cursor ~10% into the filter's rows (taken by SQL)
    const t0Defs = defs.t0!;
    const conv = (
      await db.query<{ c: string }>(`select conversation_id c from runs where tenant_id = 't0' and conversation_id is not null limit 1`)
    ).rows[0]!.c;
    const filters: Array<{ name: string; filter: RunFilter; query: string }> = [
      { name: 'no filter', filter: {}, query: '' },
      { name: 'status=Failed', filter: { statuses: ['Failed'] }, query: '&status=Failed' },
      { name: 'status=Cancelled', filter: { statuses: ['Cancelled'] }, query: '&status=Cancelled' },
      { name: 'definitionId', filter: { definitionId: t0Defs[1]! }, query: `&definitionId=${t0Defs[1]}` },
      { name: 'conversationId', filter: { conversationId: conv }, query: `&conversationId=${encodeURIComponent(conv)}` },
    ];
    const tenantRuns = Math.ceil(N / 2);
    const results: string[] = [];
    for (const fl of filters) {
      const all = listRunsQuery('t0', fl.filter, 2_000_000_000, null);
      const count = (await db.query<{ n: number }>(`select count(*)::int n from (${all.text}) x`, all.values)).rows[0]!.n;
      const depth = Math.max(0, Math.floor(count / 10) - 1);
      const [c] = (
        await db.query<{ k: string; id: string }>(
          `select x.created_key k, x.id from (${all.text}) x order by x.created_at desc, x.id desc offset ${depth} limit 1`,
          all.values,
        )
      ).rows;
      const after = c ? { createdKey: c.k, id: c.id } : null;
      for (const [label, cursor] of [
        ['first page', null],
        [`deep page (row ${depth.toLocaleString('en-US')} of ${count.toLocaleString('en-US')})`, after],
      ] as const) {
        const eq = listRunsQuery('t0', fl.filter, 50, cursor);
        const plan = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${eq.text}`, eq.values);
        out(`\n<details><summary>EXPLAIN ${fl.name}, ${label}</summary>\n\n\`\`\`\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\`\n</details>`);
        const path = `/v1/runs?limit=50${fl.query}${cursor ? `&cursor=${encodePageCursor(cursor.createdKey, cursor.id)}` : ''}`;
        const m = await measure(base, 'key-t0', [path], SAMPLES);
        results.push(row(`GET /v1/runs ${fl.name}, ${label}`, m));
        log(`${fl.name} ${label}: seq p95 ${f(m.seq.p95)} ms, 4-conc p95 ${f(m.conc.p95)} ms (load ${load()})`);
      }
    }
    const bl = await measure(base, 'key-t0', live.map((id) => `/v1/runs/${id}/blockers`), SAMPLES);
    results.push(row('GET /v1/runs/{id}/blockers (live run parked at a gate)', bl));
    log(`blockers: seq p95 ${f(bl.seq.p95)} ms, 4-conc p95 ${f(bl.conc.p95)} ms`);
    out(`\nMeasured tenant t0 holds ${tenantRuns.toLocaleString('en-US')} runs; ${SAMPLES} requests sequential, then ${SAMPLES} from 4 concurrent loops; host load ${load()} at the end.\n`);
    out('| request | seq p50 ms | seq p95 | seq p99 | 4-conc p50 | 4-conc p95 | 4-conc p99 |');
    out('|---|---|---|---|---|---|---|');
    for (const r of results) out(r);
  } finally {
    await cluster?.close().catch(() => undefined);
    await redis.stop().catch(() => undefined);
    await db.end();
    if (!flags.keep && !reuse) {
      await dropDatabase(name);
      log(`dropped ${name}`);
    }
  }
}

// ------------------------------------------------------------------ pruning vs W1

async function prunePhase(): Promise<void> {
  const name = 'flowline_scale_prune';
  const url = await freshDatabase(flags.pg!, name, false);
  const db = new pg.Pool({ connectionString: url, max: 4, application_name: 'flowline-scale' });
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const mon = new Monitor(url, redis, false);
  const clusterEnv = { API_KEYS: 't0:key-t0,t1:key-t1', RETENTION_INTERVAL_MS: '600000' };
  try {
    const pool = createPool(url, { max: 2, applicationName: 'flowline-scale-migrate' });
    await migrate(pool);
    await pool.end();
    let cluster = await startBenchCluster(url, redisServer.url, 2, clusterEnv);
    await createDefinitions(cluster.cluster.apiUrl, db, 2);
    await cluster.close();
    // expired: created 90–60 days ago (RETENTION_DAYS=30 below)
    await generate(db, PRUNE_N, new Date(Date.now() - 90 * 86_400_000), 30 * 86_400, 2);
    out(`\n## Scale: W1 while pruning ${PRUNE_N.toLocaleString('en-US')} expired runs\n`);
    out(`- ${await dbSize(db)} before pruning`);

    const runW1 = async (c: BenchCluster) => {
      const ctx = { api: new Api(c.cluster.apiUrl, 'key-t1'), mon, reps: W1_REPS, log };
      const { result, ids } = await w1(ctx, 100);
      const hops = await chainHops(mon, ids.slice(1));
      return { pooledP99: percentile(hops, 99), pooledP50: percentile(hops, 50), perRunP99: result.hopP99.median, hops: hops.length };
    };
    cluster = await startBenchCluster(url, redisServer.url, 2, clusterEnv);
    const base = await runW1(cluster);
    await cluster.close();
    log(`W1 baseline: hop p50 ${f(base.pooledP50)} p99 ${f(base.pooledP99)} ms (load ${load()})`);

    const count = async () =>
      (await db.query<{ n: number }>(`select count(*)::int n from runs where finished_at < now() - interval '30 days'`)).rows[0]!.n;
    const before = await count();
    cluster = await startBenchCluster(url, redisServer.url, 2, { ...clusterEnv, RETENTION_DAYS: '30' });
    // the pruner's first pass starts at boot: measure once it is deleting
    const until = Date.now() + 60_000;
    while ((await count()) === before && Date.now() < until) await sleep(200);
    const atStart = await count();
    const pruned = await runW1(cluster);
    const atEnd = await count();
    const loadDuring = load();
    await cluster.close();
    log(`W1 while pruning: hop p50 ${f(pruned.pooledP50)} p99 ${f(pruned.pooledP99)} ms; pruned ${atStart - atEnd} during (load ${loadDuring})`);
    const ratio = pruned.pooledP99 / base.pooledP99;
    out(`\nW1 (100-node echo chain, ${W1_REPS} measured runs each, pickup → pickup hops pooled; 2 dispatchers, 1 tool worker):\n`);
    out('| W1 | hops | hop p50 ms | hop p99 ms | median of per-run p99 ms |');
    out('|---|---|---|---|---|');
    out(`| no pruning | ${base.hops} | ${f(base.pooledP50)} | ${f(base.pooledP99)} | ${f(base.perRunP99)} |`);
    out(`| pruner deleting | ${pruned.hops} | ${f(pruned.pooledP50)} | ${f(pruned.pooledP99)} | ${f(pruned.perRunP99)} |`);
    out(`\n- hop p99 ratio (pruning / none): **${ratio.toFixed(2)}×** (target ≤ 2×)`);
    out(`- the pruner deleted ${(before - atEnd).toLocaleString('en-US')} of ${before.toLocaleString('en-US')} expired runs by the end of the measurement (${(atStart - atEnd).toLocaleString('en-US')} during it); still pruning at the end: ${atEnd > 0 ? 'yes' : 'no (finished within the window)'}; host load during ${loadDuring}`);
  } finally {
    await mon.pool.end().catch(() => undefined);
    redis.disconnect();
    await redisServer.stop().catch(() => undefined);
    await db.end();
    if (!flags.keep) {
      await dropDatabase(name);
      log(`dropped ${name}`);
    }
  }
}

out(`# bench:scale ${new Date().toISOString()} (${quick ? 'quick' : 'full'}; ${process.argv.slice(2).join(' ')})`);
out(`- host load at start: ${load()}`);
if (want('lists')) await listsPhase();
if (want('prune')) await prunePhase();
out(`\n- wall time ${((Date.now() - t0) / 1000).toFixed(0)} s; host load at end: ${load()}`);
process.exit(0);
