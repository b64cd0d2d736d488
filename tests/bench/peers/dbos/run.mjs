// Peer runner: DBOS Transact queue workflows in one worker child process, database
// bench_dbos. The bench enqueues through DBOSClient (the documented out-of-process path).
import pg from 'pg';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { fileURLToPath } from 'node:url';
import { log, hopsOf, median, nowMs, parseArgs, percentile, repeat, repsNote, runMain, startWorkerChild, pgTxCount, pgTxPerNode } from '../common.mjs';

const PEER = 'dbos';
const DB = 'bench_dbos';
// Queue and result polling interval: lower = faster pickup, more polling transactions.
const POLL_MS = Number(process.env.PEER_DBOS_POLL_MS ?? 10);
const args = parseArgs();
const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbUrl = (name) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
let client;
let worker;

async function admin(sql) {
  const c = new pg.Client({ connectionString: dbUrl('postgres') });
  await c.connect();
  try { await c.query(sql); } finally { await c.end(); }
}

const enqueue = (workflowName, id, ...a) => client.enqueue({ queueName: 'bench', workflowName, workflowID: id }, ...a);

async function runW1(n, id) {
  nodesRun += n;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await enqueue('chain', id, id, n);
  const r = await done;
  if (r.error) throw new Error(r.error);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  nodesRun += k + 2;
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await enqueue('fan', id, id, k);
  const r = await done;
  if (r.error) throw new Error(r.error);
  return r.t - t0;
}

async function runW3(m, rep) {
  nodesRun += 7 * m;
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await Promise.all(ids.map(async (id, i) => {
    const review = i % 2 === 0;
    await enqueue('canonical', id, id, review);
    if (review) await client.send(id, 'Approve', 'decision');
  }));
  const rs = await Promise.all(dones);
  const bad = rs.find((r) => r.error);
  if (bad) throw new Error(bad.error);
  return nowMs() - t0;
}

async function measure() {
  await admin(`drop database if exists ${DB} with (force)`);
  worker = startWorkerChild(fileURLToPath(new URL('./worker.mjs', import.meta.url)), { PEER_DB_URL: dbUrl(DB), PEER_POLL_MS: String(POLL_MS) });
  await worker.ready;
  client = await DBOSClient.create({ systemDatabaseUrl: dbUrl(DB) });
  txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: worker ready`);
  const setup = `1 worker process (DBOS.launch), bench enqueues with DBOSClient on a queue polled every ${POLL_MS} ms (minPollingIntervalMs; default 1000)`;
  if (args.workload === 'W1') {
    await runW1(Math.min(args.n, 10), 'warm');
    const xs = await repeat(args, (r) => runW1(args.n, `w1-${r}`));
    const hops = xs.flatMap((x) => x.hops);
    const totals = xs.map((x) => x.total);
    return {
      repsDone: xs.length,
      hopP50Ms: percentile(hops, 50), hopP99Ms: percentile(hops, 99), latencyMs: median(totals),
      notes: `one workflow of N sequential DBOS steps (each step checkpointed); hop = step i start -> step i+1 start, ${hops.length} hops over ${xs.length} chains; latencyMs = median enqueue -> last step done. ${setup}.` + repsNote(args, xs.length),
    };
  }
  if (args.workload === 'W2') {
    await runW2(Math.min(args.k, 16), 'warm');
    const ls = await repeat(args, (r) => runW2(args.k, `w2-${r}`));
    return {
      repsDone: ls.length,
      latencyMs: median(ls),
      notes: `latency = enqueue parent workflow -> join step running; the parent runs a fanout step, starts ${args.k} child workflows (one step each) on a second queue and awaits them with DBOS.waitAll (pollingIntervalMs = queue poll); median of ${ls.length} [${ls.map((x) => x.toFixed(1)).join(', ')}] ms. ${setup}.` + repsNote(args, ls.length),
      extra: { latenciesMs: ls },
    };
  }
  await runW3(Math.min(args.m, 20), 'warm');
  const secs = (await repeat(args, (r) => runW3(args.m, r))).map((ms) => ms / 1000);
  const s = median(secs);
  return {
    repsDone: secs.length,
    runsPerSec: args.m / s, nodesPerSec: (7 * args.m) / s, latencyMs: s * 1000,
    notes: `${args.m} concurrent workflows of the canonical shape (7 executed nodes: 6 steps + review as DBOS.recv answered by the bench with client.send right after enqueue, or 7 steps on the lookup branch; alternating); median of ${secs.length} [${secs.map((x) => x.toFixed(2)).join(', ')}] s. ${setup}.` + repsNote(args, secs.length),
    extra: { secs },
  };
}

let txBefore = 0;
let nodesRun = 0;

/** Measures, then closes every engine connection and adds Postgres transactions per node. */
async function main() {
  const r = await measure();
  await client.destroy();
  client = undefined;
  await worker.stop();
  const tx = await pgTxPerNode(pg, dbUrl('postgres'), DB, txBefore, nodesRun);
  return {
    ...r,
    notes: `${r.notes} Postgres: ${tx.pgTxPerNode} transactions per node (pg_stat_database of ${DB}, all nodes incl. warm-up, engine background work included).`,
    extra: { ...(r.extra ?? {}), ...tx },
  };
}

async function cleanup() {
  await client?.destroy();
  await worker?.stop();
  await admin(`drop database if exists ${DB} with (force)`);
}

await runMain(PEER, args, main, cleanup);
