// Peer runner: raw BullMQ FlowProducer, one worker child process, no Postgres.
// W1: a FlowProducer chain of N (child completes → parent moves to wait inside BullMQ's
// own Lua script, the documented fast path); W2: a FlowProducer parent with K children;
// W3: the canonical shape as flows, the condition node adding its branch's flow.
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import {
  allDoneOrThrow, doneOrThrow, hopsOf, listed, log, measureWorkload, nowMs, parseArgs, runMain, startWorkerChild,
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
  const r = await doneOrThrow(done);
  return { hops: hopsOf(r.marks), total: r.t - t0 };
}

async function runW2(k, id) {
  const children = Array.from({ length: k }, (_, i) => ({
    name: 'leaf', queueName: QUEUE, data: { w: 'W2', id, i }, opts: { removeOnComplete: true, removeOnFail: true },
  }));
  const t0 = nowMs();
  const done = worker.waitDone(id);
  await flow.add({ name: 'join', queueName: QUEUE, data: { w: 'W2', id, last: true }, children, opts: { removeOnComplete: true } });
  const r = await doneOrThrow(done);
  return r.t - t0;
}

async function runW3(m, rep) {
  const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
  const t0 = nowMs();
  const dones = ids.map((id) => worker.waitDone(id));
  await flow.addBulk(ids.map((id, i) => chainFlow(['start', 'analyze', 'check'], () => ({ w: 'W3', id, review: i % 2 === 0 }))));
  await allDoneOrThrow(dones);
  return nowMs() - t0;
}

async function main() {
  flow = new FlowProducer({ connection: connection(), prefix: pfx });
  queue = new Queue(QUEUE, { connection: connection(), prefix: pfx });
  worker = startWorkerChild(fileURLToPath(new URL('./worker.mjs', import.meta.url)), { PEER_TOKEN: token });
  await worker.ready;
  log(`${PEER}: worker ready, prefix ${pfx}`);
  return measureWorkload(args, { w1: runW1, w2: runW2, w3: runW3 }, {
    w1: ({ hops, chains }) =>
      `hop = node i start -> node i+1 start in the worker process (pickup->pickup), ${hops.length} hops over ${chains} chains; latencyMs = median whole chain (add -> last node done). FlowProducer chain declared up front; 1 worker process.`,
    w2: ({ latencies }) =>
      `latency = FlowProducer.add of parent+${args.k} children -> parent (join) job running, median of ${latencies.length} ${listed(latencies)} ms; 1 worker process, concurrency 100.`,
    w3: ({ secs }) =>
      `${args.m} concurrent runs of the canonical shape (7 executed nodes: start, analyze, check, review|lookup alternating, fanout, merge, done; review = pause answered immediately, modelled as a no-op job); median of ${secs.length} ${listed(secs, 2)} s; FlowProducer.addBulk; 1 worker process, concurrency 100.`,
  });
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
