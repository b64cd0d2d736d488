// Peer runner: raw BullMQ FlowProducer, one worker child process, no Postgres.
// W1: a FlowProducer chain of N (child completes → parent moves to wait inside BullMQ's
// own Lua script, the documented fast path); W2: a FlowProducer parent with K children;
// W3: the canonical shape as flows, the condition node adding its branch's flow.
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import {
  hopsOf, log, median, nowMs, parseArgs, percentile, repeat, repsNote, runMain, startWorkerChild,
} from '../common.mjs';
import { QUEUE, REDIS_URL, chainFlow, connection, prefix } from './shared.mjs';

const PEER = 'bullmq-flow';
const args = parseArgs();
const token = `${process.pid}-${Date.now().toString(36)}`;
const pfx = prefix(token);
let flow;
let queue;
let worker;

async function runW1(n, id) {
  const keys = Array.from({ length: n }, (_, i) => `n${i}`);
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await flow.add(chainFlow(keys, (_k, i) => ({ w: 'W1', id, idx: i, last: i === n - 1 })));
  const r = await done;
  if (r.error) throw new Error(r.error);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  const children = Array.from({ length: k }, (_, i) => ({
    name: 'leaf', queueName: QUEUE, data: { w: 'W2', id, i }, opts: { removeOnComplete: true, removeOnFail: true },
  }));
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await flow.add({ name: 'join', queueName: QUEUE, data: { w: 'W2', id, last: true }, children, opts: { removeOnComplete: true } });
  const r = await done;
  if (r.error) throw new Error(r.error);
  return r.t - t0;
}

async function runW3(m, rep) {
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await flow.addBulk(ids.map((id, i) => chainFlow(['start', 'analyze', 'check'], () => ({ w: 'W3', id, review: i % 2 === 0 }))));
  const rs = await Promise.all(dones);
  const bad = rs.find((r) => r.error);
  if (bad) throw new Error(bad.error);
  return nowMs() - t0;
}

async function main() {
  flow = new FlowProducer({ connection: connection(), prefix: pfx });
  queue = new Queue(QUEUE, { connection: connection(), prefix: pfx });
  worker = startWorkerChild(fileURLToPath(new URL('./worker.mjs', import.meta.url)), { PEER_TOKEN: token });
  await worker.ready;
  log(`${PEER}: worker ready, prefix ${pfx}`);
  if (args.workload === 'W1') {
    await runW1(Math.min(args.n, 10), 'warm');
    const xs = await repeat(args, (r) => runW1(args.n, `w1-${r}`));
    const hops = xs.flatMap((x) => x.hops);
    const totals = xs.map((x) => x.total);
    return {
      repsDone: xs.length,
      hopP50Ms: percentile(hops, 50), hopP99Ms: percentile(hops, 99), latencyMs: median(totals),
      notes: `hop = node i start -> node i+1 start in the worker process (pickup->pickup), ${hops.length} hops over ${xs.length} chains; latencyMs = median whole chain (add -> last node done). FlowProducer chain declared up front; 1 worker process.` + repsNote(args, xs.length),
    };
  }
  if (args.workload === 'W2') {
    await runW2(Math.min(args.k, 16), 'warm');
    const ls = await repeat(args, (r) => runW2(args.k, `w2-${r}`));
    return {
      repsDone: ls.length,
      latencyMs: median(ls),
      notes: `latency = FlowProducer.add of parent+${args.k} children -> parent (join) job running, median of ${ls.length} [${ls.map((x) => x.toFixed(1)).join(', ')}] ms; 1 worker process, concurrency 100.` + repsNote(args, ls.length),
      extra: { latenciesMs: ls },
    };
  }
  await runW3(Math.min(args.m, 20), 'warm');
  const secs = (await repeat(args, (r) => runW3(args.m, r))).map((ms) => ms / 1000);
  const s = median(secs);
  return {
    repsDone: secs.length,
    runsPerSec: args.m / s, nodesPerSec: (7 * args.m) / s, latencyMs: s * 1000,
    notes: `${args.m} concurrent runs of the canonical shape (7 executed nodes: start, analyze, check, review|lookup alternating, fanout, merge, done; review = pause answered immediately, modelled as a no-op job); median of ${secs.length} [${secs.map((x) => x.toFixed(2)).join(', ')}] s; FlowProducer.addBulk; 1 worker process, concurrency 100.` + repsNote(args, secs.length),
    extra: { secs },
  };
}

async function cleanup() {
  await worker?.stop();
  try { await queue?.obliterate({ force: true }); } catch (e) { log('obliterate', e); }
  await queue?.close();
  await flow?.close();
  const r = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [c, keys] = await r.scan(cursor, 'MATCH', `${pfx}*`, 'COUNT', 1000);
    cursor = c;
    if (keys.length) await r.del(...keys);
  } while (cursor !== '0');
  await r.quit();
}

await runMain(PEER, args, main, cleanup);
