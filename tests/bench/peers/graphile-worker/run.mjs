// Peer runner: graphile-worker as a DAG executor (each task adds its successor jobs;
// fan-in through a counter row), one worker child process, database bench_graphile.
import pg from 'pg';
import { Logger, makeWorkerUtils, runMigrations } from 'graphile-worker';
import { fileURLToPath } from 'node:url';
import {
  allDoneOrThrow, doneOrThrow, hopsOf, listed, log, measureWorkload, nowMs, parseArgs, peerDatabases, pgTxCount, runPgPeer,
  startWorkerChild,
} from '../common.mjs';

const PEER = 'graphile-worker';
const DB = 'bench_graphile';
const args = parseArgs();
const { dbUrl, admin } = peerDatabases(pg);
const CONCURRENCY = 24;
// W3 is a throughput figure: use the documented batching (local queue + batched
// completions); W1/W2 are latency figures: defaults (no batching delays).
const BATCHING = args.workload === 'W3' && process.env.PEER_GRAPHILE_BATCHING !== '0';
let utils;
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`[graphile ${level}] ${message}\n`);
});
let worker;

async function runW1(n, id) {
  counts.nodes += n;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await utils.addJob('node', { w: 'W1', id, idx: 0, n });
  const r = await doneOrThrow(done);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  counts.nodes += k + 2;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await utils.addJob('node', { w: 'W2', id, key: 'fanout', k });
  const r = await doneOrThrow(done);
  return r.t - t0;
}

async function runW3(m, rep) {
  counts.nodes += 7 * m;
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await utils.addJobs(ids.map((id, i) => ({ identifier: 'node', payload: { w: 'W3', id, key: 'start', review: i % 2 === 0 } })));
  await allDoneOrThrow(dones);
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
  counts.txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: worker ready (batching ${BATCHING})`);
  const setup = `1 worker process, concurrency ${CONCURRENCY}, LISTEN/NOTIFY job pickup${BATCHING ? ', localQueue size ' + (CONCURRENCY + 1) + ' + completeJobBatchDelay 0' : ', no batching'}; synchronous_commit on`;
  return measureWorkload(args, { w1: runW1, w2: runW2, w3: runW3 }, {
    w1: ({ hops, chains }) =>
      `hop = node i start -> node i+1 start in the worker process (task adds its successor job, then completes), ${hops.length} hops over ${chains} chains; latencyMs = median whole chain. ${setup}.`,
    w2: ({ latencies }) =>
      `latency = add fanout job -> join task running (fanout adds ${args.k} jobs with addJobs; each leaf decrements a counter row and adds the join at zero, one statement), median of ${latencies.length} ${listed(latencies)} ms. ${setup}.`,
    w3: ({ secs }) =>
      `${args.m} concurrent runs of the canonical shape (7 executed nodes per run, review|lookup alternating; review = pause answered immediately, a no-op job); median of ${secs.length} ${listed(secs, 2)} s. ${setup}.`,
  });
}

// Postgres transactions before the measured work, and the nodes it ran (warm-up included)
const counts = { txBefore: 0, nodes: 0 };

/** Closes every engine connection (safe twice: the result, then cleanup). */
async function close() {
  await worker?.stop();
  await utils?.release();
  utils = undefined;
}

await runPgPeer(pg, { peer: PEER, args, db: DB, counts, measure, close });
