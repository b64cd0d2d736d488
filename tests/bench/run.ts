/**
 * `npm run bench`: W0 physical references, lane overhead per call (tool and LLM lanes),
 * W1–W6 through a real Flowline cluster, the cost per node, and every peer of
 * tests/bench/peers on W1–W3 — on the bench's own
 * Postgres and Redis. Prints a markdown table; writes tests/bench/results/latest.{json,md}
 * (and tests/bench/RESULTS.md with --record).
 *
 *   npm run bench -- [--quick | --full] [--reps N] [--only w0,lanes,w1,w2,w3,w3state,w4,w5,w6,w7,w8,fairness,burst,peers,live,console]
 *                    [--peers name,name | --no-peers] [--reinstall] [--record]
 *
 * `console` (only when named in --only) runs the web console's figures in headless
 * Chromium: `npm run bench -w @flowline/console` (services/console/bench).
 */
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { freshDatabase, startPostgres, startRedis } from './lib/infra';
import { BENCH_ENV, rootDir, startBenchCluster, type BenchCluster } from './lib/flowline';
import { Monitor } from './lib/cost';
import { benchProcesses, cpuProfileAvailable } from './lib/hop-cpu';
import { w0 } from './lib/w0';
import { laneOverhead } from './lib/lanes';
import { measured, w1, w2, w3, w4, type Ctx } from './lib/workloads';
import { canonical, canonicalWithState } from './lib/graphs';
import { w5, w6DelayedStarts, w6Graph, w6Once, w6Timers } from './lib/w5-w6';
import { discoverPeers, incompletePeers, installPeer, runPeer } from './lib/peers';
import { renderMarkdown, type Results } from './lib/report';
import { spread } from './lib/stats';
import { fairness } from './lib/fairness';
import { w7 } from './lib/w7';
import { burst } from './lib/burst';
import { w8, W8_SIZES } from './lib/w8';
import pg from 'pg';
import { readProfiles, renderProfiles, selfTimes, type ProcessProfile, type ProfileWindow } from './lib/cpu-profile';
import { noiseReport, quietEnough, referenceSample, sampleLoad, type ReferenceSample } from './lib/noise';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    reps: { type: 'string' },
    only: { type: 'string' },
    peers: { type: 'string' },
    'no-peers': { type: 'boolean', default: false },
    reinstall: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

// exit handlers stop the servers and the cluster processes this bench started
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

const mode: Results['mode'] = flags.quick ? 'quick' : flags.full ? 'full' : 'default';
const reps = flags.reps ? Number(flags.reps) : mode === 'quick' ? 1 : 3;
const only = flags.only ? new Set(flags.only.split(',').map((s) => s.trim().toLowerCase())) : null;
const want = (s: string) => (only ? only.has(s) : s !== 'peers' || !flags['no-peers']);
const sizes = {
  w1: [10, 100],
  w2: [16, 256],
  w3: [100, 1000],
  w4: mode === 'quick' ? 10 : 20,
  w5Parked: mode === 'full' ? 10_000 : mode === 'quick' ? 500 : 2000,
  // idle windows hold whole in-flight-check periods (every 10 sweeps = 5 s): a 5 s window counted 0 or 1 of them
  w5IdleMs: mode === 'quick' ? 3000 : 20_000,
  w6Reps: Math.min(reps, 2),
  peerTimeoutS: mode === 'quick' ? 120 : 300,
  // --quick runs each peer on one size per workload to stay within a few minutes
  peerW1: mode === 'quick' ? [10] : [10, 100],
  peerW2: mode === 'quick' ? [16] : [16, 256],
  peerW3: mode === 'quick' ? [100] : [100, 1000],
  // tenant A's burst, tenant B's 50 runs
  fairnessA: mode === 'quick' ? 1000 : 5000,
  fairnessB: 50,
  // the replicas workload: W1 N and W3 M on 1 + 1 and on 4 dispatchers + 3 API replicas
  w7N: 100,
  w7M: mode === 'quick' ? 100 : 1000,
  w7Sockets: 100,
  // tenant A's parallel 1 MiB creates per round (tenant B reads throughout); one round per repetition
  burstCreates: 200,
};
const log = (s: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const errMsg = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 300);

const results: Results = {
  startedAt: new Date().toISOString(),
  finishedAt: '',
  command: `npm run bench --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
  mode,
  reps,
  machine: {
    nproc: cpus().length,
    memoryGiB: totalmem() / 2 ** 30,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    postgres: '',
    postgresSetup: '',
    redis: '',
    loadAvgStart: loadavg(),
    loadAvgEnd: [],
  },
  clusterEnv: { ...BENCH_ENV, DISPATCHERS: '2' },
  w0: null,
  lanes: null,
  w1: [],
  w2: [],
  w3: [],
  w4: null,
  w5: null,
  w6: null,
  cost: [],
  peers: [],
  peersMissing: [],
  live: null,
  fairness: null,
  w7: null,
  burst: null,
  w3State: null,
  w8: null,
  noise: null,
  errors: [],
};
// the host's noise, reported beside every figure: the load throughout, a fixed reference between sections
const load = sampleLoad();
log(
  `mode ${mode}, ${reps} repetition(s); load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; free ${(freemem() / 2 ** 30).toFixed(1)} GiB`,
);

// the console's figures run only when asked for, on their own cluster
if (only?.has('console')) {
  execFileSync('npm', ['run', 'bench', '-w', '@flowline/console', ...(mode === 'quick' ? ['--', '--quick'] : [])], { cwd: rootDir, stdio: 'inherit' });
  if (only.size === 1) process.exit(0);
}

const pgServer = await startPostgres();
const redisServer = await startRedis();
results.machine.postgres = pgServer.version;
results.machine.postgresSetup = pgServer.note;
results.machine.redis = redisServer.version;
const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
const referencePool = new pg.Pool({ connectionString: pgServer.adminUrl, max: 1 });
// an idle client reached by the server's shutdown at the end (see Monitor) is no failure of the bench
referencePool.on('error', () => undefined);
const reference: ReferenceSample[] = [];
const takeReference = async (at: string) => {
  try {
    reference.push(await referenceSample(referencePool, at));
  } catch (e) {
    results.errors.push(`reference after ${at}: ${errMsg(e)}`);
  }
};
await takeReference('start');

/** each section's span on the monotonic clock the services' CPU profiles use */
const sectionWindows = new Map<string, ProfileWindow>();
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

async function section(name: string, fn: () => Promise<void>): Promise<void> {
  if (!want(name)) return;
  const t0 = Date.now();
  const fromUs = monotonicUs();
  try {
    await fn();
    sectionWindows.set(name, { fromUs, toUs: monotonicUs() });
  } catch (e) {
    results.errors.push(`${name}: ${errMsg(e)}`);
    log(`${name} failed: ${errMsg(e)}`);
  }
  log(`${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await takeReference(name);
}

try {
  await section('w0', async () => {
    const url = await freshDatabase(pgServer.adminUrl, 'bench_w0', false);
    results.w0 = await w0(url, redisServer.url, mode === 'quick', reps);
  });

  await section('lanes', async () => {
    // in this process, on the bench's Redis (own prefix), before the cluster starts
    const calls = mode === 'quick' ? 100 : mode === 'full' ? 1000 : 300;
    const l = await laneOverhead(redisServer.url, calls);
    results.lanes = l;
    log(
      `lane overhead p50: tool ${l.tool.overheadP50Ms.toFixed(2)} ms, llm ${l.llm.overheadP50Ms.toFixed(2)} ms (${l.ratioP50.toFixed(2)}×)`,
    );
  });

  const clusterNeeded = ['w1', 'w2', 'w3', 'w3state', 'w4', 'w5', 'w6'].some(want);
  if (clusterNeeded) {
    await redis.flushall();
    const dbUrl = await freshDatabase(pgServer.adminUrl, 'bench_flowline', pgServer.statements);
    let c: BenchCluster | null = null;
    let mon: Monitor | null = null;
    try {
      c = await startBenchCluster(dbUrl, redisServer.url, 2);
      mon = new Monitor(dbUrl, redis, pgServer.statements);
      const processes = cpuProfileAvailable() ? await benchProcesses(c.cluster, mon, redis) : undefined;
      // BENCH_STATEMENTS=1 adds each workload's top statements (pg_stat_statements) to the report
      const statements = pgServer.statements && process.env.BENCH_STATEMENTS === '1';
      const ctx: Ctx = { api: c.api, mon, reps, log, processes, statements };
      const cl = c;
      await section('w4', async () => {
        results.w4 = await w4(ctx, sizes.w4);
      });
      await section('w1', async () => {
        for (const n of sizes.w1) {
          const { value, cost } = await measured(ctx, `W1 chain N=${n}`, async () => {
            const o = await w1(ctx, n);
            return { value: o.result, ids: o.ids };
          });
          results.w1.push(value);
          results.cost.push(cost);
        }
      });
      await section('w2', async () => {
        for (const k of sizes.w2) {
          const { value, cost } = await measured(ctx, `W2 fan K=${k}`, async () => {
            const o = await w2(ctx, k);
            return { value: o.result, ids: o.ids };
          });
          results.w2.push(value);
          results.cost.push(cost);
        }
      });
      await section('w3', async () => {
        for (const m of sizes.w3) {
          const { value, cost } = await measured(ctx, `W3 canonical M=${m}`, async () => {
            const o = await w3(ctx, m);
            return { value: o.result, ids: o.ids };
          });
          results.w3.push(value);
          results.cost.push(cost);
        }
      });
      await section('w3state', async () => {
        // the same M as W3's largest, plain then with state, back to back in this cluster
        const m = sizes.w3[sizes.w3.length - 1]!;
        // a warm-up of both paths first, so neither variant pays the processes' JIT warm-up
        await w3({ ...ctx, reps: 1 }, 100, canonical(), 'w3-warmup-plain');
        await w3({ ...ctx, reps: 1 }, 100, canonicalWithState(), 'w3-warmup-state');
        const plain = (await w3(ctx, m, canonical(), `w3-plain-${m}`)).result;
        const state = (await w3(ctx, m, canonicalWithState(), `w3-state-${m}`)).result;
        const cpuRatio = plain.cpu && state.cpu ? state.cpu.totalMs / plain.cpu.totalMs : null;
        results.w3State = { m, plain, state, cpuRatio };
        log(`W3 + state CPU per node ÷ W3: ${cpuRatio === null ? 'n/a' : cpuRatio.toFixed(2)}`);
      });
      await section('w5', async () => {
        results.w5 = await w5(ctx, sizes.w5Parked, cl.dispatchers.length, sizes.w5IdleMs);
      });
      await section('w6', async () => {
        const def = await ctx.api.createDefinition('w6', w6Graph());
        const ms: number[] = [];
        let completed = true;
        for (let i = 0; i < sizes.w6Reps; i++) {
          const o = await w6Once(ctx, cl, def);
          log(`W6: killed ${o.victim}, progress after ${o.ms.toFixed(0)} ms`);
          ms.push(o.ms);
          completed &&= o.completed;
        }
        const timers = await w6Timers(ctx, cl, 100);
        log(`W6 timers: killed ${timers.victim}, Wait PT2S late p50 ${timers.lateP50.toFixed(0)} ms, p99 ${timers.lateP99.toFixed(0)} ms`);
        const delayed = await w6DelayedStarts(ctx, cl, 100);
        log(`W6 delayed starts: killed ${delayed.victim}, started late p50 ${delayed.lateP50.toFixed(0)} ms, p99 ${delayed.lateP99.toFixed(0)} ms`);
        results.w6 = {
          recoveryMs: spread(ms),
          completed,
          leaseMs: BENCH_ENV.SHARD_LEASE_MS ?? '4000 (default)',
          timers,
          delayed,
        };
      });
    } catch (e) {
      results.errors.push(`cluster: ${errMsg(e)}`);
      log(`cluster failed: ${errMsg(e)}`);
    } finally {
      await mon?.close();
      await c?.close();
      if (c?.profileDir) results.profiles = cpuProfiles(c.profileDir, [...c.cluster.processes.keys()]);
    }
  }

  await section('w7', async () => {
    // clusters of their own: 1 dispatcher + 1 API, then 4 dispatchers + 3 API replicas
    results.w7 = await w7({
      pgAdminUrl: pgServer.adminUrl,
      redisUrl: redisServer.url,
      redis,
      statements: pgServer.statements,
      reps,
      n: sizes.w7N,
      m: sizes.w7M,
      sockets: sizes.w7Sockets,
      log,
    });
  });

  await section('w8', async () => {
    // a cluster of its own with an LLM worker: 50 tenants' LLM-shaped runs posted over a minute
    await redis.flushall();
    const dbUrl = await freshDatabase(pgServer.adminUrl, 'bench_w8', pgServer.statements);
    results.w8 = await w8(dbUrl, redisServer.url, redis, pgServer.statements, mode === 'quick' ? W8_SIZES.quick : W8_SIZES.default, log);
  });

  await section('fairness', async () => {
    // a cluster of its own: four tenants by API key, weights, no REST rate limit
    await redis.flushall();
    const dbUrl = await freshDatabase(pgServer.adminUrl, 'bench_fairness', false);
    results.fairness = await fairness(dbUrl, redisServer.url, { aRuns: sizes.fairnessA, bRuns: sizes.fairnessB }, log);
  });

  await section('burst', async () => {
    // a cluster of its own: two tenants by API key, every admission bound and rate limit at its default
    await redis.flushall();
    const dbUrl = await freshDatabase(pgServer.adminUrl, 'bench_burst', false);
    results.burst = await burst(dbUrl, redisServer.url, { creates: sizes.burstCreates, rounds: reps }, log);
  });

  await section('peers', async () => {
    const chosen = flags.peers ? flags.peers.split(',').map((s) => s.trim()) : undefined;
    for (const name of incompletePeers())
      results.peersMissing.push({ peer: name, reason: 'no runner (run.ts/run.mjs) or package.json yet' });
    for (const p of discoverPeers(chosen)) {
      log(`peer ${p.name}: installing`);
      const installErr = installPeer(p, flags.reinstall);
      if (installErr) {
        results.peersMissing.push({ peer: p.name, reason: installErr });
        continue;
      }
      const plan: ['W1' | 'W2' | 'W3', number][] = [
        ...sizes.peerW1.map((n) => ['W1', n] as ['W1', number]),
        ...sizes.peerW2.map((k) => ['W2', k] as ['W2', number]),
        ...sizes.peerW3.map((m) => ['W3', m] as ['W3', number]),
      ];
      for (const [w, param] of plan) {
        await redis.flushall();
        const o = await runPeer(
          p,
          w,
          param,
          reps,
          { DATABASE_URL: pgServer.adminUrl, REDIS_URL: redisServer.url },
          sizes.peerTimeoutS,
        );
        log(
          `peer ${p.name} ${w} ${param}: ${o.error ? `n/a (${o.error})` : JSON.stringify(o.line)} in ${o.seconds.toFixed(1)} s`,
        );
        results.peers.push(o);
      }
    }
  });

  await section('live', async () => {
    // Its own process on the local default Postgres/Redis (as the live tests use).
    const out = execFileSync(
      join(rootDir, 'node_modules', '.bin', 'tsx'),
      ['tests/bench/live-fanout.ts', '--seconds', mode === 'quick' ? '4' : '10'],
      { cwd: rootDir, encoding: 'utf8', timeout: 180_000, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const at = out.lastIndexOf('{\n  "sockets"');
    if (at < 0) throw new Error('live-fanout printed no result');
    const end = out.indexOf('\n}', at);
    results.live = JSON.parse(out.slice(at, end + 2)) as Results['live'];
    log(`live fan-out: ${JSON.stringify(results.live)}`);
  });
} finally {
  await referencePool.end().catch(() => undefined);
  redis.disconnect();
  await redisServer.stop();
  await pgServer.stop();
}

/** BENCH_CPU_PROFILE: per section that ran on the main cluster, each process's functions by self time in its window. */
function cpuProfiles(dir: string, labels: string[]): string {
  const out: string[] = [];
  for (const [name, window] of sectionWindows) {
    const byProcess = new Map<string, ProcessProfile>();
    for (const label of labels) byProcess.set(label, selfTimes(readProfiles(join(dir, label)), window, rootDir));
    out.push(renderProfiles(`${name}: self time by function (V8 CPU profiles in ${dir})`, byProcess));
  }
  // the windows beside the profiles, so they can be read again with other questions
  writeFileSync(join(dir, 'windows.json'), `${JSON.stringify(Object.fromEntries(sectionWindows), null, 2)}\n`);
  log(`CPU profiles: ${dir}`);
  return out.join('\n');
}

results.finishedAt = new Date().toISOString();
results.machine.loadAvgEnd = loadavg();
results.noise = noiseReport(load.stop(), reference);
const quiet = quietEnough(results.noise);
const md = renderMarkdown(results);
const outDir = join(rootDir, 'tests', 'bench', 'results');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(outDir, 'latest.md'), md);
if (flags.record && !quiet.ok) {
  // a figure taken on a busy host is not a figure: the recorded results stay as they were
  log(`not recording tests/bench/RESULTS.md: ${quiet.why.join('; ')}`);
} else if (flags.record) {
  const header = `<!-- written by \`${results.command}\`; the figures of one run on the machine below -->\n`;
  writeFileSync(join(rootDir, 'tests', 'bench', 'RESULTS.md'), `${header}${md}`);
}
process.stdout.write(md);
log(
  `done in ${((Date.parse(results.finishedAt) - Date.parse(results.startedAt)) / 1000).toFixed(0)} s; tests/bench/results/latest.json`,
);
process.exit(flags.record && !quiet.ok ? 2 : 0);
