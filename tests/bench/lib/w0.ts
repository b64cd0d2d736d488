/**
 * W0 physical references on this machine: pgbench (one-insert commits, TPC-B),
 * redis-benchmark, and a "null engine" — per node only what Flowline must at least do
 * (one Postgres UPDATE, one BullMQ add, one worker pickup), in one process.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { percentile } from './stats';
import { bareWorker, type BareWorkerFigure } from './w0-bare';
import { shapeFloor, type ShapeFloorFigure } from './w0-shape';
import { cpuMs, cpuPerNode, cpuProfileAvailable, type CpuPerNode, type ProcessGroups } from './hop-cpu';

export interface PgbenchFigure {
  clients: number;
  tps: number;
  latencyMs: number;
}

export interface W0Result {
  insertCommit: PgbenchFigure[];
  tpcb: PgbenchFigure | null;
  redis: { command: string; rps: number; p50Ms: number | null }[];
  nullEngine: {
    hopP50Ms: number;
    hopP99Ms: number;
    nodesPerSec: number;
    chains: number;
    /** CPU per hop of the one chain: this (the bench) process, Postgres, Redis; absent off Linux */
    cpu?: CpuPerNode | null;
  } | null;
  /** a bare BullMQ worker's CPU per echo job (compare: the W1 tool worker's CPU per hop) */
  bareWorker?: BareWorkerFigure | null;
  /** the least a hop of Flowline's shape costs (worker → report → owner: commit + add → pickup), none of Flowline's code */
  shapeFloor?: ShapeFloorFigure | null;
  notes: string[];
}

function pgbenchBin(): string {
  for (const p of ['/usr/lib/postgresql/15/bin/pgbench', '/usr/lib/postgresql/16/bin/pgbench'])
    if (existsSync(p)) return p;
  return 'pgbench';
}

function pgbench(url: string, args: string[]): PgbenchFigure | string {
  const u = new URL(url);
  const r = spawnSync(
    pgbenchBin(),
    ['-h', u.hostname, '-p', u.port || '5432', '-U', 'postgres', ...args, u.pathname.slice(1)],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const out = `${r.stdout}\n${r.stderr}`;
  const tps = out.match(/tps = ([\d.]+)/)?.[1];
  const lat = out.match(/latency average = ([\d.]+) ms/)?.[1];
  const clients = Number(args[args.indexOf('-c') + 1] ?? 1);
  if (!tps || !lat) return `pgbench failed: ${out.trim().split('\n').slice(-2).join(' ')}`;
  return { clients, tps: Number(tps), latencyMs: Number(lat) };
}

/** The physical references; `reps` repetitions of the shape floor's one chain. */
export async function w0(pgUrl: string, redisUrl: string, quick: boolean, reps = 1): Promise<W0Result> {
  const notes: string[] = [];
  const secs = quick ? '3' : '5';
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  await c.query('create table if not exists one_insert (id bigserial primary key, v int not null)');
  await c.end();
  const dir = mkdtempSync(join(tmpdir(), 'flowline-bench-'));
  const script = join(dir, 'one-insert.sql');
  writeFileSync(script, 'insert into one_insert (v) values (1);\n');
  const insertCommit: PgbenchFigure[] = [];
  for (const clients of [1, 8]) {
    const f = pgbench(pgUrl, ['-n', '-f', script, '-c', String(clients), '-j', '2', '-T', secs]);
    if (typeof f === 'string') notes.push(f);
    else insertCommit.push(f);
  }
  let tpcb: PgbenchFigure | null = null;
  const init = spawnSync(
    pgbenchBin(),
    [
      '-i',
      '-s',
      '1',
      '-q',
      '-h',
      new URL(pgUrl).hostname,
      '-p',
      new URL(pgUrl).port,
      '-U',
      'postgres',
      new URL(pgUrl).pathname.slice(1),
    ],
    { encoding: 'utf8' },
  );
  if (init.status === 0) {
    const f = pgbench(pgUrl, ['-c', '8', '-j', '2', '-T', secs]);
    if (typeof f === 'string') notes.push(f);
    else tpcb = f;
  } else notes.push(`pgbench -i failed: ${init.stderr.trim().slice(0, 200)}`);

  const ru = new URL(redisUrl);
  const rb = spawnSync(
    'redis-benchmark',
    [
      '-h',
      ru.hostname,
      '-p',
      ru.port,
      '-q',
      '-n',
      quick ? '20000' : '50000',
      '-c',
      '20',
      '-t',
      'set,get,lpush,zadd',
    ],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const redis: W0Result['redis'] = [];
  for (const line of rb.stdout?.split(/[\r\n]+/) ?? []) {
    const m = line.match(/^(?:.*\r)?([A-Z_]+).*?: ([\d.]+) requests per second(?:, p50=([\d.]+) msec)?/);
    if (m) redis.push({ command: m[1]!, rps: Number(m[2]), p50Ms: m[3] ? Number(m[3]) : null });
  }
  if (redis.length === 0)
    notes.push(`redis-benchmark gave no figures: ${(rb.stderr || rb.stdout || '').slice(0, 200)}`);

  let nullEngine: W0Result['nullEngine'] = null;
  try {
    nullEngine = await nullEngineBench(pgUrl, redisUrl, quick);
  } catch (err) {
    notes.push(`null engine failed: ${(err as Error).message}`);
  }
  let bare: BareWorkerFigure | null = null;
  if (cpuProfileAvailable()) {
    try {
      // the tool worker's lane concurrency in the bench cluster (BENCH_ENV.LANE_CONCURRENCY)
      bare = await bareWorker(redisUrl, quick ? 200 : 500, 64);
    } catch (err) {
      notes.push(`bare BullMQ worker failed: ${(err as Error).message}`);
    }
  }
  let floor: ShapeFloorFigure | null = null;
  if (cpuProfileAvailable()) {
    try {
      floor = await shapeFloor(pgUrl, redisUrl, quick, reps);
    } catch (err) {
      notes.push(`shape floor failed: ${(err as Error).message}`);
    }
  }
  return { insertCommit, tpcb, redis, nullEngine, bareWorker: bare, shapeFloor: floor, notes };
}

/**
 * Per node: UPDATE of the node's row (autocommit), `add` of the next node's job, pickup
 * by a BullMQ Worker (separate connection, same process). Latency: one chain of hops, with
 * the CPU per hop of this process, Postgres and Redis (/proc); throughput: 64 chains at
 * once, worker concurrency 64. This is also the floor of a shape where the worker commits
 * its node's outcome itself (no report hop), beside the shape floor of `w0-shape.ts`.
 */
async function nullEngineBench(pgUrl: string, redisUrl: string, quick: boolean) {
  const pool = new pg.Pool({ connectionString: pgUrl, max: 16 });
  await pool.query(
    'create table if not exists null_nodes (chain int, hop int, status text not null, primary key (chain, hop))',
  );
  await pool.query('truncate null_nodes');
  const prefix = `{nullengine-${Date.now()}}`;
  const conn = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('hops', { connection: conn(), prefix });
  const hops = quick ? 150 : 300;
  const chains = 64;
  const chainHops = quick ? 20 : 40;
  const pickups: Map<string, number[]> = new Map();
  let resolveDone: () => void = () => undefined;
  let remaining = 0;
  const worker = new Worker(
    'hops',
    async (job) => {
      const t = performance.now();
      const { chain, hop, last } = job.data as { chain: number; hop: number; last: number };
      const key = String(chain);
      const arr = pickups.get(key) ?? [];
      arr.push(t);
      pickups.set(key, arr);
      await pool.query(`update null_nodes set status = 'Succeeded' where chain = $1 and hop = $2`, [
        chain,
        hop,
      ]);
      if (hop < last) await queue.add('hop', { chain, hop: hop + 1, last }, { removeOnComplete: true });
      else if (--remaining === 0) resolveDone();
    },
    { connection: conn(), prefix, concurrency: chains },
  );
  await worker.waitUntilReady();
  const run = async (n: number, len: number) => {
    const done = new Promise<void>((r) => (resolveDone = r));
    remaining = n;
    pickups.clear();
    await pool.query('truncate null_nodes');
    await pool.query(
      `insert into null_nodes select c, h, 'Pending' from generate_series(0, $1::int - 1) c, generate_series(1, $2::int) h`,
      [n, len],
    );
    const t0 = performance.now();
    await queue.addBulk(
      Array.from({ length: n }, (_, chain) => ({
        name: 'hop',
        data: { chain, hop: 1, last: len },
        opts: { removeOnComplete: true },
      })),
    );
    await done;
    return performance.now() - t0;
  };
  await run(1, 30); // warm-up
  let groups: ProcessGroups | null = null;
  if (cpuProfileAvailable()) {
    groups = new Map([
      ['bench process', [process.pid]],
      ['postgres', (await pool.query<{ pid: number }>('select pid from pg_stat_activity')).rows.map((r) => r.pid)],
    ]);
    const info = conn();
    const redisPid = /process_id:(\d+)/.exec(await info.info('server'))?.[1];
    info.disconnect();
    if (redisPid) groups.set('redis', [Number(redisPid)]);
  }
  const before = groups ? cpuMs(groups) : null;
  const serialMs = await run(1, hops);
  const cpu = groups && before ? cpuPerNode(before, cpuMs(groups), hops, serialMs) : null;
  const serial = pickups.get('0')!;
  const gaps = serial.slice(1).map((t, i) => t - serial[i]!);
  const ms = await run(chains, chainHops);
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await pool.end();
  return {
    hopP50Ms: percentile(gaps, 50),
    hopP99Ms: percentile(gaps, 99),
    nodesPerSec: (chains * chainHops) / (ms / 1000),
    chains,
    cpu,
  };
}
