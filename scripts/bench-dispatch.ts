/**
 * Dispatch cost on this machine, through REAL Postgres and Redis with in-process dispatchers
 * and one in-process tool worker (fresh database and BullMQ prefix):
 * - hop latency: `chains` runs of Start → `chainLength` echo Tool nodes → End, one run at a
 *   time on the idle cluster; a hop is pickup → pickup (BullMQ `processedOn` of consecutive
 *   Tool jobs of a run); p50/p99 over every hop, plus created → finished per run;
 * - throughput: `runs` runs of Start → `throughputLength` echo Tool nodes → End, all committed
 *   first (the API's path), then drained: nodes/s (every node) and lane nodes/s, write
 *   transactions per node (xid delta: every committing transaction that wrote) and committed
 *   transactions per node (pg_stat_database, lease renewals included).
 *   npx tsx scripts/bench-dispatch.ts [runs=1000] [dispatchers=2] [workerConcurrency=64]
 *     [chainLength=10] [chains=50] [throughputLength=3] [mode=fast|uncached]
 * `uncached` switches the hot-path shortcuts off (SNAPSHOT_CACHE_RUNS=0: read every run every
 * tick; DISPATCH_START_DELAY_MS=0: commit every start on its own) to compare in the same minutes.
 */
import pg from 'pg';
import { queueNameFor } from '@flowline/queue';
import { createHarness, toolChainOf } from '../services/dispatcher/test/harness';
import { startToolWorker } from '../tests/integration/tool-worker';

const arg = (i: number, def: number) => Number(process.argv[2 + i] ?? def);
const runs = arg(0, 1000);
const dispatchers = arg(1, 2);
const concurrency = arg(2, 64);
const chainLength = arg(3, 10);
const chains = arg(4, 50);
const throughputLength = arg(5, 3);
const mode = process.argv[8] ?? 'fast';
const modeOverrides = mode === 'uncached' ? { SNAPSHOT_CACHE_RUNS: '0', DISPATCH_START_DELAY_MS: '0' } : {};

// every statement any client sends (this script's own are counted apart and subtracted)
let statements = 0;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

const h = await createHarness();
let benchQueries = 0;
const q = <T>(sql: string, params: unknown[] = []) => {
  benchQueries++;
  return h.db.pool.query<T & Record<string, unknown>>(sql, params);
};
const dbName = new URL(h.db.url).pathname.slice(1);
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
const xacts = async () => {
  await sleep(1200); // backends flush their statistics at most once a second
  return Number((await q<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = $1', [dbName])).rows[0]!.n);
};
const terminal = async (ids: string[]) =>
  (await q<{ n: number }>(`select count(*)::int as n from runs where id = any($1::uuid[]) and status in ('Completed','Failed','Cancelled')`, [ids])).rows[0]!.n;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number) => Math.round(n * 100) / 100;

// --- throughput: N runs committed first (the API's path), then drained by the cluster
const graph = toolChainOf(throughputLength);
const nodesPerRun = throughputLength + 2;
const ids = await h.createRuns(graph, Array.from({ length: runs }, (_, i) => ({ i })));
const c0 = await xacts();
const b0 = benchQueries;
const stopWorker = await startToolWorker(h, concurrency);
const t0 = Date.now();
const ds = [];
for (let i = 1; i <= dispatchers; i++) {
  ds.push(await h.startDispatcher(`bench-${i}`, { MAX_CONCURRENT_RUNS: String(runs * 2), DISPATCH_SWEEP_MS: '500', ...modeOverrides }));
}
while ((await terminal(ids)) < runs) await sleep(20);
const drainMs = Date.now() - t0;
const b1 = benchQueries;
const drained = ds.map((d) => d.totals());
const c1 = await xacts();
const notCompleted = (await q<{ n: number }>(`select count(*)::int as n from runs where id = any($1::uuid[]) and status <> 'Completed'`, [ids])).rows[0]!.n;

// --- hop latency: one chain at a time on the idle cluster (batching must not wait for company)
const chainGraph = toolChainOf(chainLength);
const s0 = statements - benchQueries;
const chainTicks0 = ds.reduce((a, d) => a + d.totals().commits, 0);
const hops: number[] = [];
const runMs: number[] = [];
// where a hop goes, from BullMQ's own job timestamps: job run (processedOn → finishedOn),
// finished → next job added (outcome report, tick, commit, addBulk), added → picked up
const segments = { jobRun: [] as number[], finishedToNextAdded: [] as number[], addedToPickup: [] as number[] };
for (let i = 0; i < chains + 3; i++) {
  const [id] = await h.createRuns(chainGraph, [{ i }]);
  while ((await terminal([id!])) < 1) await sleep(5);
  if (i < 3) continue; // warm-up
  const r = await q<{ ms: number }>('select extract(epoch from (finished_at - created_at)) * 1000 as ms from runs where id = $1', [id]);
  runMs.push(Number(r.rows[0]!.ms));
  const inv = await q<{ invocation_id: string }>(
    `select invocation_id from node_runs where run_id = $1 and kind = 'Tool' order by substring(node_key from 5)::int`,
    [id],
  );
  const p = h.conn.pipeline();
  for (const row of inv.rows) {
    p.hmget(`${h.redis.prefix}:${queueNameFor('tool')}:${row.invocation_id}`, 'timestamp', 'processedOn', 'finishedOn');
  }
  const jobs = ((await p.exec()) ?? []).map(([, v]) => (v as string[]).map(Number) as [number, number, number]);
  for (let k = 0; k < jobs.length; k++) {
    const [added, picked, finished] = jobs[k]!;
    segments.jobRun.push(finished - picked);
    segments.addedToPickup.push(picked - added);
    if (k > 0) {
      hops.push(picked - jobs[k - 1]![1]);
      segments.finishedToNextAdded.push(added - jobs[k - 1]![2]);
    }
  }
}
const dispatcherStatements = statements - benchQueries - s0;
const chainCommits = ds.reduce((a, d) => a + d.totals().commits, 0) - chainTicks0;
hops.sort((a, b) => a - b);
runMs.sort((a, b) => a - b);
const median = (xs: number[]) => pct([...xs].sort((a, b) => a - b), 50);


const nodes = runs * nodesPerRun;
console.log(
  JSON.stringify(
    {
      mode,
      loadAverage: (await import('node:os')).loadavg().map(round),
      hop: { chainLength, chains, samples: hops.length, p50Ms: pct(hops, 50), p90Ms: pct(hops, 90), p99Ms: pct(hops, 99), maxMs: hops.at(-1) },
      hopSegmentsP50Ms: {
        jobRun: median(segments.jobRun),
        finishedToNextAdded: median(segments.finishedToNextAdded),
        addedToPickup: median(segments.addedToPickup),
      },
      // per lane node of the chains: every statement the dispatchers sent (sweeps and lease renewals
      // included) and their apply transactions
      chainPgStatementsPerLaneNode: round(dispatcherStatements / (chains * chainLength)),
      chainApplyTxPerLaneNode: round(chainCommits / (chains * chainLength)),
      chainRunMs: { p50: Math.round(pct(runMs, 50)), p99: Math.round(pct(runMs, 99)) },
      throughput: {
        runs,
        nodesPerRun,
        dispatchers,
        workerConcurrency: concurrency,
        notCompleted,
        drainMs,
        nodesPerSec: Math.round(nodes / (drainMs / 1000)),
        laneNodesPerSec: Math.round((runs * throughputLength) / (drainMs / 1000)),
        // the dispatchers' apply transactions (one statement each) per node
        applyTxPerNode: round(drained.reduce((a, t) => a + t.commits, 0) / nodes),
        // every transaction committed in the database during the drain (reads, lease renewals),
        // less this script's own polling
        committedTxPerNode: round((c1 - c0 - (b1 - b0)) / nodes),
        ticks: drained.reduce((a, t) => a + t.ticks, 0),
        runsReadFromPostgres: drained.reduce((a, t) => a + t.loaded, 0),
        runsPlannedFromCache: drained.reduce((a, t) => a + t.cached, 0),
      },
    },
    null,
    2,
  ),
);
await stopWorker();
await h.close();
process.exit(0);
