/**
 * W0 "shape floor": the least a hop costs in Flowline's fixed shape, with none of
 * Flowline's code. A worker process (shape-worker.mjs: a plain BullMQ Worker) finishes the job
 * and publishes a report; an owner process (shape-owner.mjs) receives it, commits the node's
 * completion and the next node's queueing in one Postgres statement, and adds the next job,
 * which the worker picks up. Per hop that is the hand-offs every Flowline hop must make
 * (moveToFinished, report, commit, add, pickup) without the plan, the dispatch window, the
 * change ping or any validation. Measured like W1: one chain (hop = gap between the owner's
 * report arrivals), CPU per hop of each process from /proc; then 64 chains at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { cpuMs, cpuPerNode, type CpuPerNode, type ProcessGroups } from './hop-cpu';
import { percentile, spread, type Spread } from './stats';

export interface ShapeFloorFigure {
  /** medians over the repetitions of the one chain */
  hopP50Ms: number;
  hopP99Ms: number;
  /** the repetitions' spread of the chain's hop p50 and p99 and of all processes' CPU per hop */
  hopP50: Spread;
  hopP99: Spread;
  cpuPerHop: Spread;
  /** one chain of `hops` nodes */
  hops: number;
  /** CPU per hop by process (worker, owner, postgres, redis) over every repetition of the one chain */
  cpu: CpuPerNode;
  chains: number;
  nodesPerSec: number;
  /** CPU per node by process over the `chains` chains at once */
  cpuBatched: CpuPerNode;
}

const here = dirname(fileURLToPath(import.meta.url));

function child(script: string, args: string[]): ChildProcess & { ready: Promise<void> } {
  const c = spawn(process.execPath, [join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    c.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve());
    c.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return Object.assign(c, { ready });
}

async function stop(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null) return;
  c.kill('SIGTERM');
  await Promise.race([once(c, 'exit'), new Promise((r) => setTimeout(r, 3000))]);
  if (c.exitCode === null) c.kill('SIGKILL');
}

/** Runs the floor's one chain `reps` times (so its ratios carry a spread like W1's), then the chains at once. */
export async function shapeFloor(pgUrl: string, redisUrl: string, quick: boolean, reps = 1): Promise<ShapeFloorFigure> {
  const prefix = `{shape-${Date.now()}}`;
  const channel = `${prefix}:reports`;
  const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
  await pool.query('create table if not exists shape_nodes (chain int, hop int, status text not null, primary key (chain, hop))');
  const worker = child('shape-worker.mjs', [redisUrl, prefix, channel, '64']);
  const owner = child('shape-owner.mjs', [pgUrl, redisUrl, prefix, channel]);
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const sub = conn.duplicate();
  const queue = new Queue('hops', { connection: conn, prefix });
  try {
    await Promise.all([worker.ready, owner.ready]);
    const groups: ProcessGroups = new Map([
      ['worker', [worker.pid!]],
      ['owner', [owner.pid!]],
      ['postgres', (await pool.query<{ pid: number }>('select pid from pg_stat_activity')).rows.map((r) => r.pid)],
    ]);
    const redisPid = /process_id:(\d+)/.exec(await conn.info('server'))?.[1];
    if (redisPid) groups.set('redis', [Number(redisPid)]);

    let onDone: (msg: { chain: number; arrivals: number[] }) => void = () => undefined;
    sub.on('message', (_c: string, raw: string) => onDone(JSON.parse(raw)));
    await sub.subscribe(`${channel}:done`);
    /** runs `chains` chains of `len` nodes; resolves with the wall ms and the arrival times of chain 0 */
    const run = async (chains: number, len: number) => {
      await pool.query('truncate shape_nodes');
      await pool.query(
        `insert into shape_nodes select c, h, 'Pending' from generate_series(0, $1::int - 1) c, generate_series(1, $2::int) h`,
        [chains, len],
      );
      let left = chains;
      let first: number[] = [];
      const done = new Promise<void>((resolve) => {
        onDone = (m) => {
          if (m.chain === 0) first = m.arrivals;
          if (--left === 0) resolve();
        };
      });
      const t0 = performance.now();
      await queue.addBulk(
        Array.from({ length: chains }, (_, chain) => ({ name: 'hop', data: { chain, hop: 1, last: len }, opts: { removeOnComplete: true } })),
      );
      await done;
      return { ms: performance.now() - t0, first };
    };

    await run(1, 30); // warm-up
    const hops = quick ? 150 : 300;
    const p50: number[] = [];
    const p99: number[] = [];
    const perHop: number[] = [];
    const first = cpuMs(groups);
    let wallMs = 0;
    for (let r = 0; r < Math.max(1, reps); r++) {
      const before = cpuMs(groups);
      const serial = await run(1, hops);
      wallMs += serial.ms;
      perHop.push(cpuPerNode(before, cpuMs(groups), hops, serial.ms).totalMs);
      const gaps = serial.first.slice(1).map((t, i) => t - serial.first[i]!);
      p50.push(percentile(gaps, 50));
      p99.push(percentile(gaps, 99));
    }
    const cpu = cpuPerNode(first, cpuMs(groups), hops * p50.length, wallMs);

    const chains = 64;
    const chainHops = quick ? 20 : 40;
    const before = cpuMs(groups);
    const batched = await run(chains, chainHops);
    const cpuBatched = cpuPerNode(before, cpuMs(groups), chains * chainHops, batched.ms);
    return {
      hopP50Ms: spread(p50).median,
      hopP99Ms: spread(p99).median,
      hopP50: spread(p50),
      hopP99: spread(p99),
      cpuPerHop: spread(perHop),
      hops,
      cpu,
      chains,
      nodesPerSec: (chains * chainHops) / (batched.ms / 1000),
      cpuBatched,
    };
  } finally {
    await Promise.all([stop(worker), stop(owner)]);
    sub.disconnect();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    conn.disconnect();
    await pool.query('drop table if exists shape_nodes').catch(() => undefined);
    await pool.end();
  }
}
