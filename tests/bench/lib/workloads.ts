/**
 * W1–W4 through a running bench cluster. Timing sources: per-hop figures are the
 * differences of consecutive Tool nodes' `node_runs.started_at` (the worker's pickup
 * time: pickup → pickup, so one hop = echo + report + dispatcher tick + enqueue +
 * pickup); run latency is `runs.finished_at − runs.created_at` (server clocks); start
 * latency is the bench's clock before POST → the first Tool node's pickup.
 */
import type { JsonObject } from '@flowline/graph';
import { delta, perNode, type CostDelta, type Monitor } from './cost';
import type { Api } from './flowline';
import { canonical, chain, fan } from './graphs';
import { mapLimit, percentile, sleep, spread, type Spread } from './stats';
import { cpuMs, cpuPerNode, type CpuPerNode, type ProcessGroups } from './hop-cpu';
import { statementDelta, type StatementRow } from './statements';

export interface Ctx {
  api: Api;
  mon: Monitor;
  reps: number;
  log: (s: string) => void;
  /** the processes whose CPU W1 profiles (absent: no profile) */
  processes?: ProcessGroups;
  /** collect each measured window's per-statement table (`BENCH_STATEMENTS=1`; needs pg_stat_statements) */
  statements?: boolean;
}

export interface CostRow {
  workload: string;
  seconds: number;
  delta: CostDelta;
  perNode: ReturnType<typeof perNode>;
  /** the window's top statements by total time (only when {@link Ctx.statements}) */
  statements?: StatementRow[];
}

const TERMINAL = `('Completed','Failed','Cancelled')`;

/** Polls until every run of `ids` is terminal; throws after `timeoutMs`. */
export async function waitTerminal(
  mon: Monitor,
  ids: string[],
  timeoutMs: number,
  intervalMs = 25,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [r] = await mon.query<{ n: number }>(
      `select count(*)::int as n from runs where id = any($1::uuid[]) and status in ${TERMINAL}`,
      [ids],
    );
    if (r!.n >= ids.length) return;
    if (Date.now() > until)
      throw new Error(`${ids.length - r!.n} of ${ids.length} runs not terminal after ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Fails loudly when a run did not complete (a figure of failed runs is no figure). */
export async function assertCompleted(mon: Monitor, ids: string[]): Promise<void> {
  const rows = await mon.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from runs where id = any($1::uuid[]) group by status`,
    [ids],
  );
  const bad = rows.filter((r) => r.status !== 'Completed');
  if (bad.length === 0) return;
  const [why] = await mon.query<{ reason: string | null; failure_class: string }>(
    `select reason, failure_class from runs where id = any($1::uuid[]) and status <> 'Completed' limit 1`,
    [ids],
  );
  throw new Error(
    `runs not Completed: ${bad.map((b) => `${b.status}=${b.n}`).join(', ')} (e.g. ${why?.failure_class}: ${why?.reason})`,
  );
}

/** Pickup → pickup gaps of consecutive chain nodes t1..tN of the given runs, ms. */
export async function chainHops(mon: Monitor, ids: string[]): Promise<number[]> {
  const rows = await mon.query<{ run_id: string; k: number; ms: number }>(
    `select run_id, substr(node_key, 2)::int as k, extract(epoch from started_at) * 1000 as ms
       from node_runs where run_id = any($1::uuid[]) and node_key ~ '^t[0-9]+$' and started_at is not null`,
    [ids],
  );
  const byRun = new Map<string, Map<number, number>>();
  for (const r of rows) {
    const m = byRun.get(r.run_id) ?? new Map<number, number>();
    m.set(r.k, Number(r.ms));
    byRun.set(r.run_id, m);
  }
  const hops: number[] = [];
  for (const m of byRun.values()) for (const [k, t] of m) if (m.has(k + 1)) hops.push(m.get(k + 1)! - t);
  return hops;
}

/** Where a chain hop's time goes, from node_runs timestamps (medians over all hops of `ids`). */
async function hopBreakdown(mon: Monitor, ids: string[]): Promise<ChainResult['breakdown']> {
  const rows = await mon.query<{ exec: number; tick: number | null; queue: number | null }>(
    `select extract(epoch from (a.finished_at - a.started_at)) * 1000 as exec,
            extract(epoch from (b.queued_at - a.finished_at)) * 1000 as tick,
            extract(epoch from (b.started_at - b.queued_at)) * 1000 as queue
       from node_runs a join node_runs b on b.run_id = a.run_id and b.node_key = 't' || (substr(a.node_key, 2)::int + 1)
      where a.run_id = any($1::uuid[]) and a.node_key ~ '^t[0-9]+$'`,
    [ids],
  );
  const med = (xs: (number | null)[]) =>
    percentile(xs.filter((x): x is number => x !== null).map(Number), 50);
  return {
    execMs: med(rows.map((r) => r.exec)),
    tickMs: med(rows.map((r) => r.tick)),
    queueMs: med(rows.map((r) => r.queue)),
  };
}

async function succeededNodes(mon: Monitor, ids: string[]): Promise<number> {
  const [r] = await mon.query<{ n: number }>(
    `select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and status = 'Succeeded'`,
    [ids],
  );
  return r!.n;
}

async function runLatencies(mon: Monitor, ids: string[]): Promise<number[]> {
  const rows = await mon.query<{ ms: number }>(
    `select extract(epoch from (finished_at - created_at)) * 1000 as ms from runs where id = any($1::uuid[])`,
    [ids],
  );
  return rows.map((r) => Number(r.ms));
}

/** Snapshot → fn → settle → snapshot: the cluster's cost while `fn` ran. */
export async function measured<T>(
  ctx: Ctx,
  workload: string,
  fn: () => Promise<{ value: T; ids: string[] }>,
): Promise<{ value: T; cost: CostRow }> {
  const statsA = ctx.statements ? await ctx.mon.statementStats() : null;
  const a = await ctx.mon.snapshot();
  const { value, ids } = await fn();
  // backends report their counters to the stats system about once a second
  await sleep(1200);
  const b = await ctx.mon.snapshot();
  const statsB = statsA ? await ctx.mon.statementStats() : null;
  const d = delta(a, b);
  const nodes = await succeededNodes(ctx.mon, ids);
  const cost: CostRow = { workload, seconds: d.seconds, delta: d, perNode: perNode(d, nodes) };
  if (statsA && statsB) cost.statements = statementDelta(statsA, statsB, nodes);
  return { value, cost };
}

export interface ChainResult {
  n: number;
  /** medians over all hops: worker execution (started → finished); finished → the tick admitting the next node begins (report + wake); tick begins → next pickup (tick commit + BullMQ add + pickup) */
  breakdown: { execMs: number; tickMs: number; queueMs: number };
  hopP50: Spread;
  hopP99: Spread;
  /** (finished − created) ÷ (N + 1) per run */
  runPerHop: Spread;
  /** CPU per hop of each process over the measured runs, beside their wall time per hop */
  cpu?: CpuPerNode;
  /** all processes' CPU per hop, one figure per repetition (the spread the ratios are judged on) */
  cpuPerHop?: Spread;
}

/** W1: one chain run at a time, `reps` repetitions. */
export async function w1(ctx: Ctx, n: number): Promise<{ result: ChainResult; ids: string[] }> {
  const def = await ctx.api.createDefinition(`w1-${n}`, chain(n));
  const p50: number[] = [];
  const p99: number[] = [];
  const per: number[] = [];
  // one unmeasured warm-up run (JIT, connection pools); its cost is in the window, so its nodes count
  const warm = await ctx.api.startRun(def, {});
  await waitTerminal(ctx.mon, [warm], 60_000);
  const all: string[] = [warm];
  const cpuBefore = ctx.processes ? cpuMs(ctx.processes) : null;
  const cpuPerRep: number[] = [];
  for (let r = 0; r < ctx.reps; r++) {
    const repBefore = ctx.processes ? cpuMs(ctx.processes) : null;
    const id = await ctx.api.startRun(def, { r });
    await waitTerminal(ctx.mon, [id], 120_000, 10);
    const repLatency = (await runLatencies(ctx.mon, [id]))[0]!;
    // taken before the bench's own queries below, like the whole window's figure it adds up to
    if (ctx.processes && repBefore) cpuPerRep.push(cpuPerNode(repBefore, cpuMs(ctx.processes), n + 1, repLatency).totalMs);
    await assertCompleted(ctx.mon, [id]);
    const hops = await chainHops(ctx.mon, [id]);
    p50.push(percentile(hops, 50));
    p99.push(percentile(hops, 99));
    per.push(repLatency / (n + 1));
    all.push(id);
  }
  const cpu =
    ctx.processes && cpuBefore
      ? cpuPerNode(cpuBefore, cpuMs(ctx.processes), ctx.reps * (n + 1), per.reduce((a, b) => a + b, 0) * (n + 1))
      : undefined;
  const breakdown = await hopBreakdown(ctx.mon, all.slice(1));
  ctx.log(`W1 N=${n}: hop p50 ${p50.map((x) => x.toFixed(2)).join(', ')} ms`);
  return {
    result: { n, breakdown, hopP50: spread(p50), hopP99: spread(p99), runPerHop: spread(per), cpu, ...(cpuPerRep.length ? { cpuPerHop: spread(cpuPerRep) } : {}) },
    ids: all,
  };
}

/** W2: one fan-out/fan-in run at a time; run latency (server clocks). */
export async function w2(
  ctx: Ctx,
  k: number,
): Promise<{ result: { k: number; latencyMs: Spread }; ids: string[] }> {
  const def = await ctx.api.createDefinition(`w2-${k}`, fan(k));
  const warm = await ctx.api.startRun(def, {});
  await waitTerminal(ctx.mon, [warm], 60_000);
  const lat: number[] = [];
  const all: string[] = [warm];
  for (let r = 0; r < ctx.reps; r++) {
    const id = await ctx.api.startRun(def, { r });
    await waitTerminal(ctx.mon, [id], 120_000, 10);
    await assertCompleted(ctx.mon, [id]);
    lat.push((await runLatencies(ctx.mon, [id]))[0]!);
    all.push(id);
  }
  ctx.log(`W2 K=${k}: ${lat.map((x) => x.toFixed(1)).join(', ')} ms`);
  return { result: { k, latencyMs: spread(lat) }, ids: all };
}

/** Answers every review Pause of `ids` that is waiting, until `stop()`; returns how many it decided. */
function decider(ctx: Ctx, ids: string[]): { stop: () => Promise<number> } {
  let running = true;
  const decided = new Set<string>();
  const loop = (async () => {
    while (running) {
      const rows = await ctx.mon.query<{ run_id: string }>(
        `select run_id from node_runs where run_id = any($1::uuid[]) and node_key = 'review' and status = 'WaitingForApproval'`,
        [ids],
      );
      const todo = rows.map((r) => r.run_id).filter((id) => !decided.has(id));
      for (const id of todo) decided.add(id);
      await mapLimit(todo, 32, (id) => ctx.api.decide(id, 'review', 'Approve'));
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return decided.size;
    },
  };
}

/** W3 once: M canonical runs posted at once (64 requests in flight), pauses answered; POST of the first → last finished. */
async function w3Once(
  ctx: Ctx,
  def: string,
  m: number,
): Promise<{ runsPerSec: number; nodesPerSec: number; nodes: number; ms: number; ids: string[] }> {
  const ids: string[] = [];
  const t0 = Date.now();
  const posting = mapLimit(
    Array.from({ length: m }, (_, i) => i),
    64,
    async (i) => {
      const id = await ctx.api.startRun(def, { requiresReview: true, i });
      ids.push(id);
      return id;
    },
  );
  const d = decider(ctx, ids);
  await posting;
  const all = [...ids];
  try {
    await waitTerminal(ctx.mon, all, 300_000, 100);
  } finally {
    await d.stop();
  }
  await assertCompleted(ctx.mon, all);
  const [f] = await ctx.mon.query<{ ms: number }>(
    `select extract(epoch from max(finished_at)) * 1000 as ms from runs where id = any($1::uuid[])`,
    [all],
  );
  const secs = (Number(f!.ms) - t0) / 1000;
  const nodes = await succeededNodes(ctx.mon, all);
  return { runsPerSec: m / secs, nodesPerSec: nodes / secs, nodes, ms: secs * 1000, ids: all };
}

export interface W3Result {
  m: number;
  runsPerSec: Spread;
  nodesPerSec: Spread;
  /** CPU of every process per succeeded node over the repetitions */
  cpu?: CpuPerNode;
  /** all processes' CPU per succeeded node, one figure per repetition */
  cpuPerNode?: Spread;
}

/** W3: M canonical runs at once (`graph`: the canonical graph, or a variant of it such as {@link canonicalWithState}). */
export async function w3(
  ctx: Ctx,
  m: number,
  graph: JsonObject = canonical(),
  name = `w3-${m}`,
): Promise<{ result: W3Result; ids: string[] }> {
  const def = await ctx.api.createDefinition(name, graph);
  const rps: number[] = [];
  const nps: number[] = [];
  const all: string[] = [];
  // CPU of every process (cluster, Postgres, Redis) per succeeded node over the repetitions
  const cpuBefore = ctx.processes ? cpuMs(ctx.processes) : null;
  let nodes = 0;
  let ms = 0;
  const cpuPerRep: number[] = [];
  for (let r = 0; r < ctx.reps; r++) {
    const repBefore = ctx.processes ? cpuMs(ctx.processes) : null;
    const o = await w3Once(ctx, def, m);
    if (ctx.processes && repBefore) cpuPerRep.push(cpuPerNode(repBefore, cpuMs(ctx.processes), o.nodes, o.ms).totalMs);
    rps.push(o.runsPerSec);
    nps.push(o.nodesPerSec);
    nodes += o.nodes;
    ms += o.ms;
    all.push(...o.ids);
  }
  const cpu = ctx.processes && cpuBefore ? cpuPerNode(cpuBefore, cpuMs(ctx.processes), nodes, ms) : undefined;
  ctx.log(`${name}: nodes/s ${nps.map((x) => x.toFixed(0)).join(', ')}`);
  const result: W3Result = { m, runsPerSec: spread(rps), nodesPerSec: spread(nps), ...(cpu ? { cpu } : {}) };
  if (cpuPerRep.length) result.cpuPerNode = spread(cpuPerRep);
  return { result, ids: all };
}

/** W4: POST → first Tool node picked up, one run at a time. */
export async function w4(ctx: Ctx, samples: number): Promise<{ p50: number; p99: number; samples: number }> {
  const def = await ctx.api.createDefinition('w4', chain(1));
  const lat: number[] = [];
  for (let i = 0; i < samples + 1; i++) {
    const t0 = Date.now();
    const id = await ctx.api.startRun(def, { i });
    await waitTerminal(ctx.mon, [id], 30_000, 10);
    const [r] = await ctx.mon.query<{ ms: number }>(
      `select extract(epoch from started_at) * 1000 as ms from node_runs where run_id = $1 and node_key = 't1'`,
      [id],
    );
    if (i > 0) lat.push(Number(r!.ms) - t0);
  }
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), samples };
}

/** Starts `count` runs of `graph` (64 requests in flight) and returns their ids. */
export async function startMany(
  ctx: Ctx,
  def: string,
  count: number,
  input: (i: number) => JsonObject = () => ({}),
): Promise<string[]> {
  return mapLimit(
    Array.from({ length: count }, (_, i) => i),
    64,
    (i) => ctx.api.startRun(def, input(i)),
  );
}
