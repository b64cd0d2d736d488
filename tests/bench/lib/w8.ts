/**
 * W8 "platform day": a shared cluster's day in one minute. `runs` runs over `tenants` tenants
 * (one API key each), posted evenly over `postSeconds`, of an LLM-shaped graph:
 *
 *   Start → ask (LlmCall; the fake provider answers in 200–2,000 ms) → lookup (Tool echo)
 *         → route (Condition) → review (Pause, on half the runs; answered `decideAfterMs` after
 *           it starts waiting, with the run's own tenant key) → End
 *
 * on a cluster of its own (API, 2 dispatchers, a tool worker, an LLM worker). Figures:
 * - sustained nodes/s: nodes that finished in the steady part of the posting window (its last
 *   three quarters) per second, and over the whole day (first POST → last finish);
 * - engine overhead per node: a worker node's predecessor finished → the node's job picked up
 *   (ask after Start, lookup after ask), p50 / p99: what the engine adds between two nodes, the
 *   provider's and the tool's own time left out;
 * - CPU per succeeded node, all processes (cluster, Postgres, Redis), and Postgres statements
 *   and Redis commands per succeeded node over the day;
 * - the fairness ratio: the slowest tenant's median POST → first node (ask) picked over the
 *   fastest tenant's (1 is even);
 * - memory per parked run in the dispatchers: their live heap after a full collection (read
 *   through their V8 inspectors) before and after `parked` more runs park on the review Pause,
 *   divided by `parked`; their resident set the same way beside it.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { Redis } from 'ioredis';
import type { JsonObject } from '@flowline/graph';
import { startFakeLlm } from '@flowline/testing';
import { Api, startBenchCluster } from './flowline';
import { delta, Monitor, perNode } from './cost';
import { benchProcesses, cpuMs, cpuPerNode, cpuProfileAvailable, type CpuPerNode } from './hop-cpu';
import { mapLimit, percentile, sleep } from './stats';
import { waitTerminal } from './workloads';

export interface W8Sizes {
  runs: number;
  tenants: number;
  postSeconds: number;
  decideAfterMs: number;
  /** runs parked for the memory figure */
  parked: number;
}

export interface W8Result {
  sizes: W8Sizes;
  llmMs: [number, number];
  completed: number;
  notCompleted: Record<string, number>;
  succeededNodes: number;
  /** nodes finished per second over the last three quarters of the posting window */
  sustainedNodesPerSec: number;
  /** succeeded nodes ÷ (first POST → last finish) */
  dayNodesPerSec: number;
  daySeconds: number;
  overhead: { p50Ms: number; p99Ms: number; samples: number; byNode: Record<string, { p50Ms: number; p99Ms: number }> };
  cpu: CpuPerNode | null;
  statementsPerNode: number | null;
  redisCommandsPerNode: number;
  fairness: { ratio: number; slowestMs: number; fastestMs: number; tenants: number };
  /**
   * heapBytesPerRun: the dispatchers' live heap after a full collection, after − before, over the runs (the figure);
   * rssBytesPerRun: their resident set the same way (how far the heap grew while the runs parked, garbage included)
   */
  parkedMemory: { runs: number; heapBeforeMiB: number; heapAfterMiB: number; heapBytesPerRun: number; rssBytesPerRun: number } | null;
}

export const W8_SIZES = {
  default: { runs: 10_000, tenants: 50, postSeconds: 60, decideAfterMs: 5000, parked: 5000 },
  quick: { runs: 1000, tenants: 10, postSeconds: 10, decideAfterMs: 2000, parked: 1000 },
} satisfies Record<string, W8Sizes>;

const LLM_MS: [number, number] = [200, 2000];

function platformGraph(): JsonObject {
  return {
    schemaVersion: 1,
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'ask', kind: 'LlmCall', config: { prompt: 'Summarise the ticket and say whether it needs a review.' } },
      { key: 'lookup', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { review: 'run.input.review' } } },
      { key: 'route', kind: 'Condition', config: { path: 'output.result.review' } },
      { key: 'review', kind: 'Pause', config: { prompt: 'Approve?', allowedDecisions: ['Approve', 'Reject'] } },
      { key: 'end', kind: 'End', joinPolicy: 'Any', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'ask' },
      { key: 'e2', from: 'ask', to: 'lookup' },
      { key: 'e3', from: 'lookup', to: 'route' },
      { key: 'e4', from: 'route', to: 'review', condition: { op: 'Eq', value: true } },
      { key: 'e5', from: 'route', to: 'end', condition: { op: 'Ne', value: true } },
      { key: 'e6', from: 'review', to: 'end', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
      { key: 'e7', from: 'review', to: 'end', condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } },
    ],
  };
}

/**
 * The live heap of a process after a full collection, through its V8 inspector (the W8
 * dispatchers run with `--inspect=127.0.0.1:0`): what parked runs actually keep, where the
 * resident set only shows how far the heap has grown.
 */
async function liveHeapBytes(wsUrl: string): Promise<number> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const call = (method: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const mine = ++id;
      const onMessage = (raw: WebSocket.RawData) => {
        const msg = JSON.parse(raw.toString()) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
        if (msg.id !== mine) return;
        ws.off('message', onMessage);
        if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
        else resolve(msg.result ?? {});
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id: mine, method }));
    });
  try {
    // twice: the first pass can leave garbage that finalizers freed for the second
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    return Number((await call('Runtime.getHeapUsage')).usedSize);
  } finally {
    ws.close();
  }
}

/** Resident set of `pid` in bytes (/proc/<pid>/status VmRSS); 0 once it is gone. */
function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The median of five readings 500 ms apart of the dispatchers' summed RSS. */
async function dispatchersRss(pids: number[]): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    xs.push(pids.reduce((a, p) => a + rssBytes(p), 0));
    await sleep(500);
  }
  return percentile(xs, 50);
}

interface Posted {
  id: string;
  tenant: string;
  at: number;
}

export async function w8(
  dbUrl: string,
  redisUrl: string,
  redis: Redis,
  statements: boolean,
  sizes: W8Sizes,
  log: (s: string) => void,
): Promise<W8Result> {
  const tenants = Array.from({ length: sizes.tenants }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);
  const keyOf = (t: string) => `bench-w8-key-${t}`;
  // a deterministic spread of provider latencies over the day
  let calls = 0;
  const llm = await startFakeLlm({
    handler: () => {
      const f = ((calls++ * 7919) % 1000) / 999;
      return { content: 'A short summary.', delayMs: Math.round(LLM_MS[0] + f * (LLM_MS[1] - LLM_MS[0])) };
    },
  });
  const c = await startBenchCluster(
    dbUrl,
    redisUrl,
    2,
    {
      API_KEYS: tenants.map((t) => `${t}:${keyOf(t)}`).join(','),
      RATE_LIMIT_WRITES_PER_SECOND: '0',
      RATE_LIMIT_READS_PER_SECOND: '0',
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_MODEL: 'fake-model',
      LLM_STREAM: '0',
      // every process listens for an inspector on a port of its own: the dispatchers' answer the
      // live-heap readings of the memory figure (an inspector nobody attaches to costs nothing)
      NODE_OPTIONS: '--inspect=127.0.0.1:0',
    },
    1,
    // every call waits 0.2–2 s on the provider: the LLM lane holds a few hundred at once
    [{ label: 'worker-llm-1', service: 'worker-llm', env: { LANE_CONCURRENCY: '500' } }],
  );
  const mon = new Monitor(dbUrl, redis, statements);
  const api = new Map(tenants.map((t) => [t, new Api(c.cluster.apiUrl, keyOf(t))]));
  try {
    const defs = new Map<string, string>();
    for (const t of tenants) defs.set(t, await api.get(t)!.createDefinition(`w8-${t}`, platformGraph()));
    // warm-up: one run per tenant through every node (JIT, pools, the provider's connections)
    const warm = await mapLimit(tenants, 16, (t) => api.get(t)!.startRun(defs.get(t)!, { review: false }));
    await waitTerminal(mon, warm, 120_000, 500);

    const groups = cpuProfileAvailable() ? await benchProcesses(c.cluster, mon, redis) : null;
    const cpuBefore = groups ? cpuMs(groups) : null;
    const before = await mon.snapshot();
    const posted: Posted[] = [];
    let deciding = true;
    // answers each review `decideAfterMs` after it began waiting, with the run's tenant key
    const decider = (async () => {
      const decided = new Set<string>();
      while (deciding) {
        const rows = await mon.query<{ run_id: string; since: number }>(
          `select run_id, extract(epoch from started_at) * 1000 as since from node_runs
            where node_key = 'review' and status = 'WaitingForApproval' and run_id = any($1::uuid[])`,
          [posted.map((p) => p.id)],
        );
        const tenantOf = new Map(posted.map((p) => [p.id, p.tenant]));
        const due = rows.filter((r) => !decided.has(r.run_id) && Date.now() - Number(r.since) >= sizes.decideAfterMs);
        for (const r of due) decided.add(r.run_id);
        await mapLimit(due, 32, (r) => api.get(tenantOf.get(r.run_id)!)!.decide(r.run_id, 'review', 'Approve'));
        await sleep(250);
      }
    })();

    const t0 = Date.now();
    const perTick = sizes.runs / (sizes.postSeconds * 10);
    let sent = 0;
    for (let tick = 1; sent < sizes.runs; tick++) {
      const due = Math.min(sizes.runs, Math.round(perTick * tick)) - sent;
      const batch = Array.from({ length: due }, (_, i) => sent + i);
      sent += due;
      await mapLimit(batch, 64, async (i) => {
        const tenant = tenants[i % tenants.length]!;
        const at = Date.now();
        const id = await api.get(tenant)!.startRun(defs.get(tenant)!, { review: i % 2 === 0, i }, randomUUID());
        posted.push({ id, tenant, at });
      });
      const next = t0 + tick * 100;
      if (next > Date.now()) await sleep(next - Date.now());
    }
    const postedMs = Date.now() - t0;
    log(`W8: posted ${sizes.runs} runs over ${(postedMs / 1000).toFixed(1)} s (${sizes.tenants} tenants)`);
    const ids = posted.map((p) => p.id);
    try {
      await waitTerminal(mon, ids, Math.max(300_000, sizes.runs * 60), 500);
    } finally {
      deciding = false;
      await decider;
    }
    await sleep(1200);
    const after = await mon.snapshot();
    const cpuAfter = groups ? cpuMs(groups) : null;

    const statuses = await mon.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from runs where id = any($1::uuid[]) group by status`,
      [ids],
    );
    const completed = statuses.find((s) => s.status === 'Completed')?.n ?? 0;
    const notCompleted = Object.fromEntries(statuses.filter((s) => s.status !== 'Completed').map((s) => [s.status, s.n]));
    const [nodes] = await mon.query<{ n: number; steady: number; last: number }>(
      `select count(*)::int as n,
              count(*) filter (where finished_at >= to_timestamp($2::float8 / 1000) and finished_at < to_timestamp($3::float8 / 1000))::int as steady,
              extract(epoch from max(finished_at)) * 1000 as last
         from node_runs where run_id = any($1::uuid[]) and status = 'Succeeded'`,
      [ids, t0 + postedMs / 4, t0 + postedMs],
    );
    const daySeconds = (Number(nodes!.last) - t0) / 1000;
    const overheadRows = await mon.query<{ node_key: string; ms: number }>(
      `select n.node_key, extract(epoch from (n.started_at - p.finished_at)) * 1000 as ms
         from node_runs n
         join node_runs p on p.run_id = n.run_id and p.node_key = case n.node_key when 'ask' then 'start' else 'ask' end
        where n.run_id = any($1::uuid[]) and n.node_key in ('ask', 'lookup')
          and n.started_at is not null and p.finished_at is not null`,
      [ids],
    );
    const all = overheadRows.map((r) => Number(r.ms));
    const byNode: W8Result['overhead']['byNode'] = {};
    for (const key of ['ask', 'lookup']) {
      const xs = overheadRows.filter((r) => r.node_key === key).map((r) => Number(r.ms));
      byNode[key] = { p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99) };
    }
    const firstPick = await mon.query<{ run_id: string; ms: number }>(
      `select run_id, extract(epoch from started_at) * 1000 as ms from node_runs where run_id = any($1::uuid[]) and node_key = 'ask'`,
      [ids],
    );
    const postedAt = new Map(posted.map((p) => [p.id, p]));
    const perTenant = new Map<string, number[]>();
    for (const r of firstPick) {
      const p = postedAt.get(r.run_id)!;
      perTenant.set(p.tenant, [...(perTenant.get(p.tenant) ?? []), Number(r.ms) - p.at]);
    }
    const medians = [...perTenant.values()].map((xs) => percentile(xs, 50));
    const d = delta(before, after);
    const per = perNode(d, nodes!.n);

    // memory: the dispatchers' RSS before and after `parked` more runs park on the review
    let parkedMemory: W8Result['parkedMemory'] = null;
    const dispatcherPids = [...c.cluster.processes.entries()].filter(([l]) => l.startsWith('dispatcher')).map(([, p]) => p.proc.pid!);
    const inspectors = c.lines.map((l) => /^\S*\[dispatcher-\d+\]\S* .*Debugger listening on (ws:\/\/\S+)/.exec(l)?.[1]).filter((u): u is string => !!u);
    if (inspectors.length !== dispatcherPids.length) throw new Error(`W8: ${inspectors.length} dispatcher inspectors found for ${dispatcherPids.length} dispatchers`);
    const liveHeap = async () => (await Promise.all(inspectors.map(liveHeapBytes))).reduce((a, b) => a + b, 0);
    if (sizes.parked > 0) {
      const heapBefore = await liveHeap();
      const rssBefore = await dispatchersRss(dispatcherPids);
      const parkIds = await mapLimit(
        Array.from({ length: sizes.parked }, (_, i) => i),
        64,
        (i) => api.get(tenants[i % tenants.length]!)!.startRun(defs.get(tenants[i % tenants.length]!)!, { review: true, i }),
      );
      await waitParked(mon, parkIds, Math.max(120_000, sizes.parked * 30));
      await sleep(2000);
      const rssAfter = await dispatchersRss(dispatcherPids);
      const heapAfter = await liveHeap();
      parkedMemory = {
        runs: sizes.parked,
        heapBeforeMiB: heapBefore / 2 ** 20,
        heapAfterMiB: heapAfter / 2 ** 20,
        heapBytesPerRun: (heapAfter - heapBefore) / sizes.parked,
        rssBytesPerRun: (rssAfter - rssBefore) / sizes.parked,
      };
    }

    const result: W8Result = {
      sizes,
      llmMs: LLM_MS,
      completed,
      notCompleted,
      succeededNodes: nodes!.n,
      sustainedNodesPerSec: nodes!.steady / ((postedMs * 0.75) / 1000),
      dayNodesPerSec: nodes!.n / daySeconds,
      daySeconds,
      overhead: { p50Ms: percentile(all, 50), p99Ms: percentile(all, 99), samples: all.length, byNode },
      cpu: groups && cpuBefore && cpuAfter ? cpuPerNode(cpuBefore, cpuAfter, nodes!.n, daySeconds * 1000) : null,
      statementsPerNode: per.statementsPerNode ?? null,
      redisCommandsPerNode: d.redisCommands / nodes!.n,
      fairness: { ratio: Math.max(...medians) / Math.min(...medians), slowestMs: Math.max(...medians), fastestMs: Math.min(...medians), tenants: medians.length },
      parkedMemory,
    };
    log(
      `W8: ${completed}/${sizes.runs} completed; sustained ${result.sustainedNodesPerSec.toFixed(0)} nodes/s; overhead p50 ${result.overhead.p50Ms.toFixed(1)} ms, p99 ${result.overhead.p99Ms.toFixed(1)} ms; fairness ${result.fairness.ratio.toFixed(2)}; parked ${parkedMemory ? `${(parkedMemory.heapBytesPerRun / 1024).toFixed(2)} KiB/run live heap` : 'n/a'}`,
    );
    return result;
  } finally {
    await mon.close();
    await c.close();
    await llm.close();
  }
}


async function waitParked(mon: Monitor, ids: string[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [r] = await mon.query<{ n: number }>(
      `select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'review' and status = 'WaitingForApproval'`,
      [ids],
    );
    if (r!.n >= ids.length) return;
    if (Date.now() > until) throw new Error(`W8: ${ids.length - r!.n} of ${ids.length} runs not parked after ${timeoutMs} ms`);
    await sleep(500);
  }
}
