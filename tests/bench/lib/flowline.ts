/**
 * A whole Flowline cluster for the bench: API, dispatchers and a tool worker as separate
 * processes (@flowline/testing `startCluster`) running the compiled services (`npm run build` output, `node
 * services/<svc>/dist/main.js`, as production runs them), on a fresh migrated database of
 * the bench's Postgres and the bench's redis-server; plus the small REST client and waits the
 * workloads use.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, migrate } from '@flowline/db';
import { readWorkerBeats } from '@flowline/queue';
import type { Lane } from '@flowline/graph';
import { Redis } from 'ioredis';
import { buildServices, freePort, startCluster, waitForApi, type Cluster, type ProcessSpec } from '@flowline/testing';
import { sleep } from './stats';

export const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Settings of the bench cluster; everything else is the services' default. */
export const BENCH_ENV: Record<string, string> = {
  SHARD_COUNT: '16',
  MAX_CONCURRENT_RUNS: '100000',
  MAX_NODES_PER_DEFINITION: '300',
  MAX_NODE_RUNS_PER_RUN: '300',
  MAX_TOTAL_ATTEMPTS: '1000',
  LANE_CONCURRENCY: '64',
  // W3 keeps 64 starts in flight while its decider answers pauses: one tenant pushing as hard
  // as it can, which the default per-tenant admission bound (64) would answer with 429s
  ADMISSION_TENANT_WRITES: '256',
  LOG_LEVEL: 'warn',
};

export interface BenchCluster {
  cluster: Cluster;
  api: Api;
  /** every API replica's base URL, the first one `api`'s */
  apiUrls: string[];
  dispatchers: string[];
  lines: string[];
  /** BENCH_CPU_PROFILE set: where each process writes its V8 CPU profile on close, one folder per label */
  profileDir: string | null;
  close(): Promise<void>;
}

/** BENCH_CPU_PROFILE's sampling interval: 1 ms (V8's default) gives too few samples in a quick section's ~1 s of CPU per process. */
const PROFILE_INTERVAL_US = 250;

/**
 * Migrates `databaseUrl` and starts the processes (with `env` over {@link BENCH_ENV}); resolves
 * once every shard is leased. `apiReplicas` > 1 adds API processes `api-2`, … on ports of their own.
 */
export async function startBenchCluster(
  databaseUrl: string,
  redisUrl: string,
  dispatchers = 2,
  env: Record<string, string> = {},
  apiReplicas = 1,
  /** processes beside the API, the dispatchers and the tool worker (e.g. an LLM worker) */
  extra: ProcessSpec[] = [],
): Promise<BenchCluster> {
  const pool = createPool(databaseUrl, { max: 2, applicationName: 'flowline-bench-migrate' });
  await migrate(pool);
  const apiPort = await freePort();
  const lines: string[] = [];
  const names = Array.from({ length: dispatchers }, (_, i) => `dispatcher-${i + 1}`);
  const extraApiPorts: number[] = [];
  for (let i = 1; i < apiReplicas; i++) extraApiPorts.push(await freePort());
  const processes: ProcessSpec[] = [
    { label: 'api', service: 'api' },
    ...extraApiPorts.map((port, i) => ({ label: `api-${i + 2}`, service: 'api' as const, env: { PORT: String(port) } })),
    ...names.map((n) => ({ label: n, service: 'dispatcher' as const, env: { DISPATCHER_ID: n } })),
    { label: 'worker-tool-1', service: 'worker-tool' },
    ...extra,
  ];
  // the measured code is what production runs: compiled JavaScript without the TypeScript loader
  buildServices(rootDir, [...new Set(processes.map((p) => p.service))]);
  const queuePrefix = `{bench-${randomUUID().slice(0, 8)}}`;
  const profileRoot = process.env.BENCH_CPU_PROFILE;
  const profileDir = profileRoot ? join(profileRoot, `cluster-${new Date().toISOString().replace(/[:.]/g, '-')}`) : null;
  const cluster = startCluster({
    rootDir,
    compiled: true,
    databaseUrl,
    redisUrl,
    apiPort,
    queuePrefix,
    env: {
      ...BENCH_ENV,
      ...env,
      ...(process.env.BENCH_CLUSTER_ENV
        ? (JSON.parse(process.env.BENCH_CLUSTER_ENV) as Record<string, string>)
        : {}),
    },
    processes,
    ...(profileDir ? { cpuProfileDir: profileDir, cpuProfileIntervalUs: PROFILE_INTERVAL_US } : {}),
    onLine: (l) => {
      lines.push(l);
      if (lines.length > 2000) lines.splice(0, 1000);
      if (process.env.BENCH_VERBOSE) process.stdout.write(`${l}\n`);
    },
  });
  try {
    await waitForApi(cluster.apiUrl, 60_000);
    for (const port of extraApiPorts) await waitForApi(`http://127.0.0.1:${port}`, 60_000);
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await pool.query<{ n: number }>(
        'select count(*)::int as n from shard_leases where owner is not null and expires_at > now()',
      );
      if (r.rows[0]!.n >= Number(BENCH_ENV.SHARD_COUNT)) break;
      if (Date.now() > until) throw new Error('shards not leased within 60 s');
      await sleep(200);
    }
    // every lane worker takes jobs (its first heartbeat): a section then measures no worker still booting
    const lanes = new Set<Lane>(processes.flatMap((p) => (p.service === 'worker-tool' ? ['tool' as const] : p.service === 'worker-llm' ? ['llm' as const] : [])));
    await workersReady(redisUrl, queuePrefix, lanes, until);
  } catch (err) {
    process.stderr.write(`${lines.slice(-40).join('\n')}\n`);
    await cluster.stop(3000);
    await pool.end();
    throw err;
  }
  await pool.end();
  return {
    cluster,
    api: new Api(cluster.apiUrl),
    apiUrls: [cluster.apiUrl, ...extraApiPorts.map((port) => `http://127.0.0.1:${port}`)],
    dispatchers: names,
    lines,
    profileDir,
    async close() {
      // a process writes its profile as it exits: give a profiled one time to write it rather than SIGKILL it
      await cluster.stop(profileDir ? 30_000 : 5000);
    },
  };
}

/** Resolves once every lane of `lanes` has a live worker heartbeat; throws at `until` (epoch ms). */
async function workersReady(redisUrl: string, prefix: string, lanes: ReadonlySet<Lane>, until: number): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  try {
    for (const lane of lanes) {
      while ((await readWorkerBeats(redis, prefix, lane, Date.now())).length === 0) {
        if (Date.now() > until) throw new Error(`no ${lane} worker took jobs within 60 s`);
        await sleep(100);
      }
    }
  } finally {
    redis.disconnect();
  }
}

/** The REST calls the workloads make (CONTRACT §5). */
export class Api {
  /** @param apiKey sent as `Bearer` (the cluster's API_KEYS names its tenant); none when auth is off */
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : null) as T;
  }

  async createDefinition(name: string, graph: unknown): Promise<string> {
    return (
      await this.call<{ id: string }>('POST', '/v1/definitions', {
        name: `${name}-${randomUUID().slice(0, 6)}`,
        graph,
      })
    ).id;
  }

  /** Starts a run; `requestId` makes a repeated start return the same run. */
  async startRun(definitionId: string, input: unknown, requestId: string = randomUUID()): Promise<string> {
    return (
      await this.call<{ runId: string }>('POST', `/v1/definitions/${definitionId}/runs`, {
        requestId,
        input,
      })
    ).runId;
  }

  /** Starts a delayed run (`startAt`, RFC 3339): it reads Scheduled until then. */
  async startRunAt(definitionId: string, input: unknown, startAt: Date, requestId: string = randomUUID()): Promise<string> {
    return (
      await this.call<{ runId: string }>('POST', `/v1/definitions/${definitionId}/runs`, {
        requestId,
        input,
        startAt: startAt.toISOString(),
      })
    ).runId;
  }

  async cancel(runId: string): Promise<void> {
    await this.call('POST', `/v1/runs/${runId}/cancel`, {});
  }

  async decide(runId: string, nodeKey: string, decision: 'Approve' | 'Reject'): Promise<void> {
    await this.call('POST', `/v1/runs/${runId}/nodes/${nodeKey}/decide`, {
      operationId: randomUUID(),
      decision,
    });
  }
}
