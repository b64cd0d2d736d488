/**
 * W7 "replicas": is the CPU of a hop O(1) in the number of replicas? W1 (one chain
 * at a time) and W3 (M canonical runs at once) run on two clusters in turn, each on a fresh
 * database and a flushed Redis: 1 dispatcher + 1 API, then 4 dispatchers + 3 API replicas with
 * 100 Socket.IO sockets on the last API replica, each subscribed to a run of its own that
 * takes no part in the workload (parked on a Pause). The requests of the workloads go to the
 * first API replica.
 *
 * Figures per cluster: CPU ms per W1 hop and per W3 succeeded node of every process and all of
 * them (/proc, hop-cpu.ts; background work of the window included: lease renewals, sweeps,
 * BullMQ's blocking polls, so idle replicas show what they cost), and the W1 CPU per hop of
 * the dispatcher(s) that hold none of the measured chains' shards (read from `shard_leases`
 * after the runs). Targets: large ÷ small CPU within 1.1×; a non-owning dispatcher ≤ 0.1 ms per hop.
 */
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { io, type Socket } from 'socket.io-client';
import { LIVE_EVENTS } from '@flowline/queue';
import { Monitor } from './cost';
import { freshDatabase } from './infra';
import { startBenchCluster } from './flowline';
import { parked } from './graphs';
import { benchProcesses, cpuMs, cpuPerNode, type CpuPerNode } from './hop-cpu';
import { startMany, w1, w3, type Ctx } from './workloads';
import { sleep } from './stats';

/** How long the idle cost of each process is read before W1, ms. */
const IDLE_WINDOW_MS = 5000;

export interface W7Side {
  dispatchers: number;
  apis: number;
  sockets: number;
  /** CPU ms per second of each process on the idle cluster (sockets connected), measured before W1 */
  idleMsPerSec: Record<string, number>;
  w1: {
    n: number;
    hopP50Ms: number;
    cpu: CpuPerNode;
    owners: string[];
    nonOwnerMaxMs: number | null;
    /** what that dispatcher's idle rate alone spends over one hop's wall time */
    nonOwnerIdleMs: number | null;
  };
  w3: { m: number; nodesPerSec: number; cpu: CpuPerNode };
}

export interface W7Result {
  small: W7Side;
  large: W7Side;
  /** large ÷ small, all processes */
  w1CpuRatio: number;
  w3CpuRatio: number;
}

export interface W7Options {
  pgAdminUrl: string;
  redisUrl: string;
  redis: Redis;
  statements: boolean;
  reps: number;
  n: number;
  m: number;
  sockets: number;
  log: (s: string) => void;
}

async function side(o: W7Options, dispatchers: number, apis: number, sockets: number): Promise<W7Side> {
  await o.redis.flushall();
  const dbUrl = await freshDatabase(o.pgAdminUrl, `bench_w7_${dispatchers}x${apis}`, o.statements);
  const c = await startBenchCluster(dbUrl, o.redisUrl, dispatchers, {}, apis);
  const mon = new Monitor(dbUrl, o.redis, o.statements);
  const open: Socket[] = [];
  try {
    const processes = await benchProcesses(c.cluster, mon, o.redis);
    const ctx: Ctx = { api: c.api, mon, reps: o.reps, log: o.log, processes };
    if (sockets > 0) {
      const def = await c.api.createDefinition('w7-watched', parked());
      const watched = await startMany(ctx, def, sockets);
      const url = c.apiUrls[c.apiUrls.length - 1]!;
      for (let i = 0; i < sockets; i++) open.push(io(url, { path: '/socket.io', transports: ['websocket'] }));
      await Promise.all(open.map((s) => (s.connected ? null : once(s as never, 'connect'))));
      await Promise.all(open.map((s, i) => s.timeout(30_000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId: watched[i]!, afterSeq: 0 })));
    }
    // the idle cost of each process (sweeps, lease renewals, BullMQ's blocking polls), to tell background from per-hop work
    const idleBefore = cpuMs(processes);
    const idleT0 = Date.now();
    await sleep(IDLE_WINDOW_MS);
    const idleAfter = cpuMs(processes);
    const idleSecs = (Date.now() - idleT0) / 1000;
    const idleMsPerSec: Record<string, number> = {};
    for (const [label, ms] of idleAfter) idleMsPerSec[label] = (ms - (idleBefore.get(label) ?? 0)) / idleSecs;

    const chain = await w1(ctx, o.n);
    const measuredIds = chain.ids.slice(1);
    const owners = (
      await mon.query<{ owner: string }>(
        `select distinct l.owner from runs r join shard_leases l on l.shard = r.shard where r.id = any($1::uuid[]) and l.owner is not null`,
        [measuredIds],
      )
    ).map((r) => r.owner);
    const cpu = chain.result.cpu!;
    const others = Object.entries(cpu.byProcess).filter(([label]) => label.startsWith('dispatcher-') && !owners.includes(label));
    const nonOwnerMaxMs = others.length ? Math.max(...others.map(([, ms]) => ms)) : null;
    const nonOwnerIdleMs = others.length ? Math.max(...others.map(([label]) => ((idleMsPerSec[label] ?? 0) * cpu.wallMs) / 1000)) : null;

    const before = cpuMs(processes);
    const t0 = Date.now();
    const many = await w3(ctx, o.m);
    const wall = Date.now() - t0;
    const [r] = await mon.query<{ n: number }>(`select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and status = 'Succeeded'`, [many.ids]);
    const w3cpu = cpuPerNode(before, cpuMs(processes), r!.n, wall);
    o.log(
      `W7 ${dispatchers} dispatcher(s) + ${apis} API: W1 CPU/hop ${cpu.totalMs.toFixed(2)} ms (non-owner max ${nonOwnerMaxMs?.toFixed(2) ?? '-'}), W3 CPU/node ${w3cpu.totalMs.toFixed(2)} ms`,
    );
    return {
      dispatchers,
      apis,
      sockets,
      idleMsPerSec,
      w1: { n: o.n, hopP50Ms: chain.result.hopP50.median, cpu, owners, nonOwnerMaxMs, nonOwnerIdleMs },
      w3: { m: o.m, nodesPerSec: many.result.nodesPerSec.median, cpu: w3cpu },
    };
  } finally {
    for (const s of open) s.disconnect();
    await mon.close();
    await c.close();
  }
}

/** Runs W1 and W3 on 1 + 1, then on 4 dispatchers + 3 API replicas (one with `sockets` sockets on unrelated runs). */
export async function w7(o: W7Options): Promise<W7Result> {
  const small = await side(o, 1, 1, 0);
  const large = await side(o, 4, 3, o.sockets);
  return { small, large, w1CpuRatio: large.w1.cpu.totalMs / small.w1.cpu.totalMs, w3CpuRatio: large.w3.cpu.totalMs / small.w3.cpu.totalMs };
}
