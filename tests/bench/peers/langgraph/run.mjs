// Peer runner: LangGraph.js StateGraph with the Postgres checkpointer (database
// bench_langgraph). LangGraph.js has no separate worker process: graphs run in the
// caller's process, so this runner is one process; nodes are no-ops.
import pg from 'pg';
import { setMaxListeners } from 'node:events';
import { Annotation, Command, END, START, Send, StateGraph, interrupt } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { hopsOf, listed, log, measureWorkload, nowMs, parseArgs, peerDatabases, pgTxCount, runPgPeer } from '../common.mjs';

const PEER = 'langgraph';
const DB = 'bench_langgraph';
// Concurrent invokes each add an abort listener to shared signals: not a leak.
setMaxListeners(0);
const args = parseArgs();
const { dbUrl, admin } = peerDatabases(pg);
// "async" is LangGraph's documented default (checkpoint written while the next step runs);
// "sync" checkpoints before the next step starts.
const DURABILITY = process.env.PEER_LANGGRAPH_DURABILITY ?? 'async';
let pool;
let saver;
const marks = new Map();
const mark = (id, i) => {
  let a = marks.get(id);
  if (!a) marks.set(id, (a = []));
  a[i] = nowMs();
};

const cfg = (thread, steps) => ({ configurable: { thread_id: thread }, recursionLimit: steps + 10, durability: DURABILITY });

function chainGraph(n) {
  const State = Annotation.Root({ id: Annotation() });
  let g = new StateGraph(State);
  for (let i = 0; i < n; i++) g = g.addNode(`n${i}`, (s) => { mark(s.id, i); return {}; });
  g = g.addEdge(START, 'n0');
  for (let i = 1; i < n; i++) g = g.addEdge(`n${i - 1}`, `n${i}`);
  return g.addEdge(`n${n - 1}`, END).compile({ checkpointer: saver });
}

function fanGraph(k) {
  const State = Annotation.Root({
    id: Annotation(),
    count: Annotation({ reducer: (a, b) => a + b, default: () => 0 }),
  });
  return new StateGraph(State)
    .addNode('fanout', () => ({}))
    .addNode('leaf', () => ({ count: 1 }))
    .addNode('join', (s) => { mark(s.id, 0); if (s.count !== k) throw new Error(`join saw ${s.count}/${k}`); return {}; })
    .addEdge(START, 'fanout')
    .addConditionalEdges('fanout', (s) => Array.from({ length: k }, (_, i) => new Send('leaf', { id: s.id, i })))
    .addEdge('leaf', 'join')
    .addEdge('join', END)
    .compile({ checkpointer: saver });
}

// The canonical shape: start → analyze → check → (review | lookup) → fanout → merge → done.
function canonicalGraph() {
  const State = Annotation.Root({ id: Annotation(), needsReview: Annotation() });
  const noop = () => ({});
  return new StateGraph(State)
    .addNode('start', noop).addNode('analyze', noop).addNode('check', noop)
    .addNode('review', () => {
      const decision = interrupt({ prompt: 'Approve the analysis?' });
      if (decision !== 'Approve') throw new Error(`review got ${decision}`);
      return {};
    })
    .addNode('lookup', noop).addNode('fanout', noop).addNode('merge', noop)
    .addNode('done', (s) => { mark(s.id, 0); return {}; })
    .addEdge(START, 'start').addEdge('start', 'analyze').addEdge('analyze', 'check')
    .addConditionalEdges('check', (s) => (s.needsReview ? 'review' : 'lookup'), ['review', 'lookup'])
    .addEdge('review', 'fanout').addEdge('lookup', 'fanout')
    .addEdge('fanout', 'merge').addEdge('merge', 'done').addEdge('done', END)
    .compile({ checkpointer: saver });
}

async function measure() {
  await admin(`drop database if exists ${DB} with (force)`);
  await admin(`create database ${DB}`);
  pool = new pg.Pool({ connectionString: dbUrl(DB), max: 20 });
  // An idle client ended by the server (e.g. the final DROP DATABASE … WITH (FORCE)) must not crash the runner.
  pool.on('error', (e) => log('pg pool:', e.message));
  saver = new PostgresSaver(pool);
  await saver.setup();
  counts.txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: checkpointer ready (durability ${DURABILITY})`);
  const setup = `in-process (LangGraph.js runs the graph in the caller), PostgresSaver on a pg pool of 20, durability "${DURABILITY}"${DURABILITY === 'async' ? ' (the default: checkpoint written while the next step runs)' : ''}`;
  // one compiled graph per size (the warm-up runs a smaller one)
  const chains = new Map();
  const fans = new Map();
  const canonical = canonicalGraph();
  const runW1 = async (n, id) => {
    if (!chains.has(n)) chains.set(n, chainGraph(n));
    counts.nodes += n;
    const t0 = nowMs();
    await chains.get(n).invoke({ id }, cfg(id, n));
    const m = marks.get(id);
    return { hops: hopsOf(m), total: m[m.length - 1] - t0 };
  };
  const runW2 = async (k, id) => {
    if (!fans.has(k)) fans.set(k, fanGraph(k));
    counts.nodes += k + 2;
    const t0 = nowMs();
    await fans.get(k).invoke({ id }, cfg(id, 4));
    return marks.get(id)[0] - t0;
  };
  const runOne = async (id, review) => {
    const out = await canonical.invoke({ id, needsReview: review }, cfg(id, 10));
    if (review) {
      if (!out.__interrupt__) throw new Error(`${id}: review branch did not pause`);
      await canonical.invoke(new Command({ resume: 'Approve' }), cfg(id, 10));
    }
  };
  const runW3 = async (m, rep) => {
    counts.nodes += 7 * m;
    const t0 = nowMs();
    const ids = Array.from({ length: m }, (_, i) => `w3-${rep}-${i}`);
    await Promise.all(ids.map((id, i) => runOne(id, i % 2 === 0)));
    // A run ends when its last node starts, as for the other peers.
    return Math.max(...ids.map((id) => marks.get(id)[0])) - t0;
  };
  return measureWorkload(args, { w1: runW1, w2: runW2, w3: runW3 }, {
    w1: ({ hops, chains: n }) =>
      `StateGraph chain of N no-op nodes (one superstep each, checkpointed); hop = node i start -> node i+1 start, ${hops.length} hops over ${n} chains; latencyMs = median invoke -> last node start. ${setup}.`,
    w2: ({ latencies }) =>
      `latency = invoke -> join node running; fanout sends ${args.k} Send('leaf') tasks (one superstep), join after the barrier; median of ${latencies.length} ${listed(latencies)} ms. ${setup}.`,
    w3: ({ secs }) =>
      `${args.m} concurrent threads of the canonical shape (7 executed nodes; review = interrupt() answered immediately with Command({resume}), lookup alternating); median of ${secs.length} ${listed(secs, 2)} s. ${setup}.`,
  });
}

// Postgres transactions before the measured work, and the nodes it ran (warm-up included)
const counts = { txBefore: 0, nodes: 0 };

/** Closes every engine connection (safe twice: the result, then cleanup). */
async function close() {
  await pool?.end();
  pool = undefined;
}

await runPgPeer(pg, { peer: PEER, args, db: DB, counts, measure, close });
