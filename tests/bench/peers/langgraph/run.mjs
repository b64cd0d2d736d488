// Peer runner: LangGraph.js StateGraph with the Postgres checkpointer (database
// bench_langgraph). LangGraph.js has no separate worker process: graphs run in the
// caller's process, so this runner is one process; nodes are no-ops.
import pg from 'pg';
import { setMaxListeners } from 'node:events';
import { Annotation, Command, END, START, Send, StateGraph, interrupt } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { log, hopsOf, median, nowMs, parseArgs, percentile, repeat, repsNote, runMain, pgTxCount, pgTxPerNode } from '../common.mjs';

const PEER = 'langgraph';
const DB = 'bench_langgraph';
// Concurrent invokes each add an abort listener to shared signals: not a leak.
setMaxListeners(0);
const args = parseArgs();
const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const dbUrl = (name) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
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

async function admin(sql) {
  const c = new pg.Client({ connectionString: dbUrl('postgres') });
  await c.connect();
  try { await c.query(sql); } finally { await c.end(); }
}

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
  txBefore = await pgTxCount(pg, dbUrl('postgres'), DB);
  log(`${PEER}: checkpointer ready (durability ${DURABILITY})`);
  const setup = `in-process (LangGraph.js runs the graph in the caller), PostgresSaver on a pg pool of 20, durability "${DURABILITY}"${DURABILITY === 'async' ? ' (the default: checkpoint written while the next step runs)' : ''}`;
  if (args.workload === 'W1') {
    const g = chainGraph(args.n);
    const one = async (id) => {
      nodesRun += args.n;
      const t0 = nowMs();
      await g.invoke({ id }, cfg(id, args.n));
      const m = marks.get(id);
      return { hops: hopsOf(m), total: m[m.length - 1] - t0 };
    };
    await one('w1-warm');
    const xs = await repeat(args, (r) => one(`w1-${r}`));
    const hops = xs.flatMap((x) => x.hops);
    const totals = xs.map((x) => x.total);
    return {
      repsDone: xs.length,
      hopP50Ms: percentile(hops, 50), hopP99Ms: percentile(hops, 99), latencyMs: median(totals),
      notes: `StateGraph chain of N no-op nodes (one superstep each, checkpointed); hop = node i start -> node i+1 start, ${hops.length} hops over ${xs.length} chains; latencyMs = median invoke -> last node start. ${setup}.` + repsNote(args, xs.length),
    };
  }
  if (args.workload === 'W2') {
    const g = fanGraph(args.k);
    const one = async (id) => {
      nodesRun += args.k + 2;
      const t0 = nowMs();
      await g.invoke({ id }, cfg(id, 4));
      return marks.get(id)[0] - t0;
    };
    await one('w2-warm');
    const ls = await repeat(args, (r) => one(`w2-${r}`));
    return {
      repsDone: ls.length,
      latencyMs: median(ls),
      notes: `latency = invoke -> join node running; fanout sends ${args.k} Send('leaf') tasks (one superstep), join after the barrier; median of ${ls.length} [${ls.map((x) => x.toFixed(1)).join(', ')}] ms. ${setup}.` + repsNote(args, ls.length),
      extra: { latenciesMs: ls },
    };
  }
  const g = canonicalGraph();
  const runOne = async (id, review) => {
    const out = await g.invoke({ id, needsReview: review }, cfg(id, 10));
    if (review) {
      if (!out.__interrupt__) throw new Error(`${id}: review branch did not pause`);
      await g.invoke(new Command({ resume: 'Approve' }), cfg(id, 10));
    }
  };
  const batch = async (r, m) => {
    nodesRun += 7 * m;
    const t0 = nowMs();
    const ids = Array.from({ length: m }, (_, i) => `w3-${r}-${i}`);
    await Promise.all(ids.map((id, i) => runOne(id, i % 2 === 0)));
    // A run ends when its last node starts, as for the other peers.
    return (Math.max(...ids.map((id) => marks.get(id)[0])) - t0) / 1000;
  };
  await batch('warm', Math.min(args.m, 20));
  const secs = await repeat(args, (r) => batch(r, args.m));
  const s = median(secs);
  return {
    repsDone: secs.length,
    runsPerSec: args.m / s, nodesPerSec: (7 * args.m) / s, latencyMs: s * 1000,
    notes: `${args.m} concurrent threads of the canonical shape (7 executed nodes; review = interrupt() answered immediately with Command({resume}), lookup alternating); median of ${secs.length} [${secs.map((x) => x.toFixed(2)).join(', ')}] s. ${setup}.` + repsNote(args, secs.length),
    extra: { secs },
  };
}

let txBefore = 0;
let nodesRun = 0;

/** Measures, then closes every engine connection and adds Postgres transactions per node. */
async function main() {
  const r = await measure();
  await pool.end();
  pool = undefined;
  const tx = await pgTxPerNode(pg, dbUrl('postgres'), DB, txBefore, nodesRun);
  return {
    ...r,
    notes: `${r.notes} Postgres: ${tx.pgTxPerNode} transactions per node (pg_stat_database of ${DB}, all nodes incl. warm-up, engine background work included).`,
    extra: { ...(r.extra ?? {}), ...tx },
  };
}

async function cleanup() {
  await pool?.end();
  await admin(`drop database if exists ${DB} with (force)`);
}

await runMain(PEER, args, main, cleanup);
