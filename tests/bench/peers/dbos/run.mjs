// Peer runner: DBOS Transact queue workflows in one worker child process, database
// bench_dbos. The bench enqueues through DBOSClient (the documented out-of-process path).
import pg from 'pg';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { fileURLToPath } from 'node:url';
import {
  allDoneOrThrow, doneOrThrow, hopsOf, listed, log, measureWorkload, nowMs, parseArgs, peerDatabases, pgTxCount, runPgPeer,
  startWorkerChild,
} from '../common.mjs';

const PEER = 'dbos';
const DB = 'bench_dbos';
// Queue and result polling interval: lower = faster pickup, more polling transactions.
const POLL_MS = Number(process.env.PEER_DBOS_POLL_MS ?? 10);
const args = parseArgs();
const { dbUrl, admin } = peerDatabases(pg);
let client;
let worker;

const enqueue = (workflowName, id, ...a) => client.enqueue({ queueName: 'bench', workflowName, workflowID: id }, ...a);

async function runW1(n, id) {
  counts.nodes += n;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await enqueue('chain', id, id, n);
  const r = await doneOrThrow(done);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  counts.nodes += k + 2;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await enqueue('fan', id, id, k);
  const r = await doneOrThrow(done);
  return r.t - t0;
}

async function runW3(m, rep) {
  counts.nodes += 7 * m;
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await Promise.all(ids.map(async (id, i) => {
    const review = i % 2 === 0;
    await enqueue('canonical', id, id, review);
    if (review) await client.send(id, 'Approve', 'decision');
  }));
  await allDoneOrThrow(dones);
  return nowMs() - t0;
}

async function measure() {
  await admin(`drop database if exists ${DB} with (force)`);
  worker = startWorkerChild(fileURLToPath(new URL('./worker.mjs', import.meta.url)), { PEER_DB_URL: dbUrl(DB), PEER_POLL_MS: String(POLL_MS) });
  await worker.ready;
  client = await DBOSClient.create({ systemDatabaseUrl: dbUrl(DB) });
  counts.txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: worker ready`);
  const setup = `1 worker process (DBOS.launch), bench enqueues with DBOSClient on a queue polled every ${POLL_MS} ms (minPollingIntervalMs; default 1000)`;
  return measureWorkload(args, { w1: runW1, w2: runW2, w3: runW3 }, {
    w1: ({ hops, chains }) =>
      `one workflow of N sequential DBOS steps (each step checkpointed); hop = step i start -> step i+1 start, ${hops.length} hops over ${chains} chains; latencyMs = median enqueue -> last step done. ${setup}.`,
    w2: ({ latencies }) =>
      `latency = enqueue parent workflow -> join step running; the parent runs a fanout step, starts ${args.k} child workflows (one step each) on a second queue and awaits them with DBOS.waitAll (pollingIntervalMs = queue poll); median of ${latencies.length} ${listed(latencies)} ms. ${setup}.`,
    w3: ({ secs }) =>
      `${args.m} concurrent workflows of the canonical shape (7 executed nodes: 6 steps + review as DBOS.recv answered by the bench with client.send right after enqueue, or 7 steps on the lookup branch; alternating); median of ${secs.length} ${listed(secs, 2)} s. ${setup}.`,
  });
}

// Postgres transactions before the measured work, and the nodes it ran (warm-up included)
const counts = { txBefore: 0, nodes: 0 };

/** Closes every engine connection (safe twice: the result, then cleanup). */
async function close() {
  await client?.destroy();
  client = undefined;
  await worker?.stop();
}

await runPgPeer(pg, { peer: PEER, args, db: DB, counts, measure, close });
