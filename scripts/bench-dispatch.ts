/**
 * Dispatch throughput on this machine: N concurrent Start → Tool(echo) → End runs through
 * in-process dispatchers and one in-process tool worker on a fresh database and BullMQ
 * prefix. Reports runs/s, lane nodes/s, committed Postgres transactions per node and the
 * per-run latency (created → finished) percentiles.
 *   npx tsx scripts/bench-dispatch.ts [runs=1000] [dispatchers=2] [workerConcurrency=64]
 */
import { createHarness, startToolWorker, toolChain } from '../services/dispatcher/test/harness';

const runs = Number(process.argv[2] ?? 1000);
const dispatchers = Number(process.argv[3] ?? 2);
const concurrency = Number(process.argv[4] ?? 64);

const h = await createHarness();
const dbName = new URL(h.db.url).pathname.slice(1);
const xacts = async () =>
  Number((await h.db.pool.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = $1', [dbName])).rows[0]!.n);
const terminal = async (ids: string[]) =>
  (
    await h.db.pool.query<{ n: number }>(
      `select count(*)::int as n from runs where id = any($1::uuid[]) and status in ('Completed','Failed','Cancelled')`,
      [ids],
    )
  ).rows[0]!.n;
const graph = toolChain('echo', { bench: true });

// Throughput: N runs are committed first (the API's path), then the cluster drains them.
const ids = await h.createRuns(graph, Array.from({ length: runs }, (_, i) => ({ i })));
const stopWorker = await startToolWorker(h, concurrency);
const x0 = await xacts();
const t0 = Date.now();
const ds = [];
for (let i = 1; i <= dispatchers; i++) ds.push(await h.startDispatcher(`bench-${i}`, { MAX_CONCURRENT_RUNS: String(runs * 2), DISPATCH_SWEEP_MS: '500' }));
while ((await terminal(ids)) < runs) await new Promise((res) => setTimeout(res, 20));
const drainMs = Date.now() - t0;
const x1 = await xacts();
const notCompleted = (await h.db.pool.query<{ n: number }>(`select count(*)::int as n from runs where id = any($1::uuid[]) and status <> 'Completed'`, [ids])).rows[0]!.n;

// Latency: one run at a time on an idle cluster (batching must not wait for company).
const lat: number[] = [];
for (let i = 0; i < 30; i++) {
  const [id] = await h.createRuns(graph, [{ i }]);
  while ((await terminal([id!])) < 1) await new Promise((res) => setImmediate(res));
  const r = await h.db.pool.query<{ ms: number }>('select extract(epoch from (finished_at - created_at)) * 1000 as ms from runs where id = $1', [id]);
  lat.push(Number(r.rows[0]!.ms));
}
lat.sort((a, b) => a - b);
const totals = ds.map((d) => d.totals());
console.log(
  JSON.stringify(
    {
      runs,
      dispatchers,
      workerConcurrency: concurrency,
      notCompleted,
      drainMs,
      runsPerSec: Math.round(runs / (drainMs / 1000)),
      nodesPerSec: Math.round((3 * runs) / (drainMs / 1000)),
      laneNodesPerSec: Math.round(runs / (drainMs / 1000)),
      // every commit in the database during the drain (ticks, lease renewals), per lane node
      pgCommitsPerLaneNode: Number(((x1 - x0) / runs).toFixed(2)),
      tickTransactions: totals.reduce((a, t) => a + t.ticks, 0),
      singleRunLatencyMs: { p50: Math.round(lat[15]!), p90: Math.round(lat[27]!), max: Math.round(lat[29]!) },
    },
    null,
    2,
  ),
);
await stopWorker();
await h.close();
process.exit(0);
