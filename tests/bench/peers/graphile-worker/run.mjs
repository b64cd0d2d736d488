// Peer runner: graphile-worker as a DAG executor (each task adds its successor jobs;
// fan-in through a counter row), one worker child process, database bench_graphile.
import pg from 'pg';
import { Logger, makeWorkerUtils, runMigrations } from 'graphile-worker';
import { fileURLToPath } from 'node:url';
import { log, hopsOf, median, nowMs, parseArgs, percentile, repeat, repsNote, runMain, startWorkerChild, pgTxCount, pgTxPerNode } from '../common.mjs';

const PEER = 'graphile-worker';
const DB = 'bench_graphile';
const args = parseArgs();
const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbUrl = (name) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
const CONCURRENCY = 24;
// W3 is a throughput figure: use the documented batching (local queue + batched
// completions); W1/W2 are latency figures: defaults (no batching delays).
const BATCHING = args.workload === 'W3' && process.env.PEER_GRAPHILE_BATCHING !== '0';
let utils;
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`[graphile ${level}] ${message}\n`);
});
let worker;

async function admin(sql) {
  const c = new pg.Client({ connectionString: dbUrl('postgres') });
  await c.connect();
  try { await c.query(sql); } finally { await c.end(); }
}

async function runW1(n, id) {
  nodesRun += n;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await utils.addJob('node', { w: 'W1', id, idx: 0, n });
  const r = await done;
  if (r.error) throw new Error(r.error);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  nodesRun += k + 2;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await utils.addJob('node', { w: 'W2', id, key: 'fanout', k });
  const r = await done;
  if (r.error) throw new Error(r.error);
  return r.t - t0;
}

async function runW3(m, rep) {
  nodesRun += 7 * m;
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await utils.addJobs(ids.map((id, i) => ({ identifier: 'node', payload: { w: 'W3', id, key: 'start', review: i % 2 === 0 } })));
  const rs = await Promise.all(dones);
  const bad = rs.find((r) => r.error);
  if (bad) throw new Error(bad.error);
  return nowMs() - t0;
}

async function measure() {
  await admin(`drop database if exists ${DB} with (force)`);
  await admin(`create database ${DB}`);
  await runMigrations({ connectionString: dbUrl(DB), logger });
  utils = await makeWorkerUtils({ connectionString: dbUrl(DB), logger });
  await utils.withPgClient((c) => c.query('create table bench_fanin (id text primary key, remaining int not null)'));
  worker = startWorkerChild(fileURLToPath(new URL('./worker.mjs', import.meta.url)), {
    PEER_DB_URL: dbUrl(DB), PEER_CONCURRENCY: String(CONCURRENCY), PEER_BATCHING: BATCHING ? '1' : '0',
  });
  await worker.ready;
  txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: worker ready (batching ${BATCHING})`);
  const setup = `1 worker process, concurrency ${CONCURRENCY}, LISTEN/NOTIFY job pickup${BATCHING ? ', localQueue size ' + (CONCURRENCY + 1) + ' + completeJobBatchDelay 0' : ', no batching'}; synchronous_commit on`;
  if (args.workload === 'W1') {
    await runW1(Math.min(args.n, 10), 'warm');
    const xs = await repeat(args, (r) => runW1(args.n, `w1-${r}`));
    const hops = xs.flatMap((x) => x.hops);
    const totals = xs.map((x) => x.total);
    return {
      repsDone: xs.length,
      hopP50Ms: percentile(hops, 50), hopP99Ms: percentile(hops, 99), latencyMs: median(totals),
      notes: `hop = node i start -> node i+1 start in the worker process (task adds its successor job, then completes), ${hops.length} hops over ${xs.length} chains; latencyMs = median whole chain. ${setup}.` + repsNote(args, xs.length),
    };
  }
  if (args.workload === 'W2') {
    await runW2(Math.min(args.k, 16), 'warm');
    const ls = await repeat(args, (r) => runW2(args.k, `w2-${r}`));
    return {
      repsDone: ls.length,
      latencyMs: median(ls),
      notes: `latency = add fanout job -> join task running (fanout adds ${args.k} jobs with addJobs; each leaf decrements a counter row and adds the join at zero, one statement), median of ${ls.length} [${ls.map((x) => x.toFixed(1)).join(', ')}] ms. ${setup}.` + repsNote(args, ls.length),
      extra: { latenciesMs: ls },
    };
  }
  await runW3(Math.min(args.m, 20), 'warm');
  const secs = (await repeat(args, (r) => runW3(args.m, r))).map((ms) => ms / 1000);
  const s = median(secs);
  return {
    repsDone: secs.length,
    runsPerSec: args.m / s, nodesPerSec: (7 * args.m) / s, latencyMs: s * 1000,
    notes: `${args.m} concurrent runs of the canonical shape (7 executed nodes per run, review|lookup alternating; review = pause answered immediately, a no-op job); median of ${secs.length} [${secs.map((x) => x.toFixed(2)).join(', ')}] s. ${setup}.` + repsNote(args, secs.length),
    extra: { secs },
  };
}

let txBefore = 0;
let nodesRun = 0;

/** Measures, then closes every engine connection and adds Postgres transactions per node. */
async function main() {
  const r = await measure();
  await worker.stop();
  await utils.release();
  utils = undefined;
  const tx = await pgTxPerNode(pg, dbUrl('postgres'), DB, txBefore, nodesRun);
  return {
    ...r,
    notes: `${r.notes} Postgres: ${tx.pgTxPerNode} transactions per node (pg_stat_database of ${DB}, all nodes incl. warm-up, engine background work included).`,
    extra: { ...(r.extra ?? {}), ...tx },
  };
}

async function cleanup() {
  await worker?.stop();
  await utils?.release();
  await admin(`drop database if exists ${DB} with (force)`);
}

await runMain(PEER, args, main, cleanup);
