/**
 * The whole Flowline cluster as real child processes for black-box tests: a fresh
 * migrated database, a redis-server of its own on a free port (so FLUSHALL disturbs no
 * other test) or, with `redisCluster`, a Redis Cluster of its own, a unique BullMQ prefix,
 * free ports, and the REST client (`@flowline/client`).
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { Cluster as RedisCluster, Redis } from 'ioredis';
import { ApiRequestError, createClient, type FlowlineClient } from '@flowline/client';
import { createTestDatabase, type TestDatabase } from '../pg';
import { uniquePrefix } from '../redis';
import { waitFor } from '../wait-for';
import { freePort, spawnRedis } from './infra';
import { startRedisCluster } from './redis-cluster';
import { startCluster, waitForApi, type Cluster, type ProcessSpec } from './processes';

/** The repository's root directory. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const SHARD_COUNT = 8;

/** Environment every process of an e2e cluster gets: short leases and sweeps, test tools on. */
const E2E_ENV: Record<string, string> = {
  SHARD_COUNT: String(SHARD_COUNT),
  SHARD_LEASE_MS: '2000',
  DISPATCH_SWEEP_MS: '200',
  INFLIGHT_CHECK_EVERY_SWEEPS: '5',
  WF_TEST_TOOLS: '1',
  LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
};

export interface RunView {
  run: { id: string; status: string; failureClass: string; reason: string | null };
  nodeRuns: { nodeKey: string; kind: string; status: string; attempt: number; failureClass: string; reason: string | null }[];
  output: unknown;
}

export interface E2eCluster {
  cluster: Cluster;
  db: TestDatabase;
  redisUrl: string;
  /** the harness's own connection: a cluster client when started with `redisCluster` */
  redis: Redis | RedisCluster;
  /** `REDIS_CLUSTER_NODES` of the processes when started with `redisCluster`, else null */
  redisClusterNodes: string | null;
  /** the BullMQ prefix (a hash tag) every process shares */
  queuePrefix: string;
  api: ApiClient;
  /** label of the dispatcher process holding the lease of the run's shard */
  ownerOf(runId: string): Promise<string | null>;
  /**
   * Kills (SIGKILL) the dispatcher owning the run's shard and waits until `survivor` holds every
   * shard; answers the killed one's label. Needs two dispatchers.
   */
  killRunOwner(runId: string): Promise<{ killed: string; survivor: string }>;
  /** output lines of every process (dumped when a test fails) */
  lines: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  dispatchers?: number;
  toolWorkers?: number;
  /** LLM workers (the built-in scripted provider unless LLM_BASE_URL is set); default 0 */
  llmWorkers?: number;
  /** extra environment for every process */
  env?: Record<string, string>;
  /** the DATABASE_URL the processes get, from the test database's (e.g. with a password in it) */
  mapDatabaseUrl?: (url: string) => string;
  /** run on a 3-master Redis Cluster of the test's own (REDIS_CLUSTER_NODES) instead of one redis-server @default false */
  redisCluster?: boolean;
}

export async function startE2eCluster(o: StartOptions = {}): Promise<E2eCluster> {
  const db = await createTestDatabase();
  const redisServer = o.redisCluster
    ? await startRedisCluster()
    : await spawnRedis().then((s) => ({ url: s.url, nodesEnv: null, nodes: [], stop: () => stopProcess(s.proc) }));
  const redisUrl = redisServer.url;
  const apiPort = await freePort();
  const lines: string[] = [];
  const processes: ProcessSpec[] = [{ label: 'api', service: 'api' }];
  const dispatchers = o.dispatchers ?? 2;
  for (let i = 1; i <= dispatchers; i++) {
    processes.push({ label: `dispatcher-${i}`, service: 'dispatcher', env: { DISPATCHER_ID: `dispatcher-${i}` } });
  }
  for (let i = 1; i <= (o.toolWorkers ?? 1); i++) processes.push({ label: `worker-tool-${i}`, service: 'worker-tool' });
  for (let i = 1; i <= (o.llmWorkers ?? 0); i++) processes.push({ label: `worker-llm-${i}`, service: 'worker-llm' });
  const queuePrefix = uniquePrefix();
  const cluster = startCluster({
    rootDir: REPO_ROOT,
    databaseUrl: o.mapDatabaseUrl ? o.mapDatabaseUrl(db.url) : db.url,
    // clustered, the processes get a REDIS_URL nothing listens on: only REDIS_CLUSTER_NODES can reach Redis
    redisUrl: redisServer.nodesEnv ? 'redis://127.0.0.1:1' : redisUrl,
    apiPort,
    queuePrefix,
    env: { ...E2E_ENV, ...(redisServer.nodesEnv ? { REDIS_CLUSTER_NODES: redisServer.nodesEnv } : {}), ...o.env },
    processes,
    onLine: (l) => {
      lines.push(l);
      if (process.env.E2E_VERBOSE) process.stdout.write(`${l}\n`);
    },
  });
  const redis = redisServer.nodesEnv
    ? new RedisCluster(redisServer.nodes, { redisOptions: { maxRetriesPerRequest: null } })
    : new Redis(redisUrl, { maxRetriesPerRequest: null });
  const close = async () => {
    await cluster.stop(5000);
    redis.disconnect();
    await redisServer.stop();
    await db.drop();
  };
  try {
    await waitForApi(cluster.apiUrl, 45_000);
    await waitFor(
      async () => {
        // Leased and balanced: a dispatcher that joins late takes its share from the first one
        // through a moment where the shard has no owner, so wait until every dispatcher holds one.
        const r = await db.pool.query<{ n: number; owners: number }>(
          'select count(*)::int as n, count(distinct owner)::int as owners from shard_leases where owner is not null and expires_at > now()',
        );
        return r.rows[0]!.n === SHARD_COUNT && r.rows[0]!.owners === Math.min(dispatchers, SHARD_COUNT);
      },
      { timeoutMs: 45_000, intervalMs: 200, description: 'every shard leased, every dispatcher holding its share' },
    );
  } catch (err) {
    process.stdout.write(`${lines.slice(-80).join('\n')}\n`);
    await close();
    throw err;
  }
  const api = new ApiClient(cluster.apiUrl);
  const ownerOf = async (runId: string): Promise<string | null> => {
    const r = await db.pool.query<{ owner: string | null }>(
      'select l.owner from runs r join shard_leases l on l.shard = r.shard where r.id = $1 and l.expires_at > now()',
      [runId],
    );
    return r.rows[0]?.owner ?? null;
  };
  return {
    cluster,
    db,
    redisUrl,
    redis,
    redisClusterNodes: redisServer.nodesEnv,
    queuePrefix,
    api,
    lines,
    ownerOf,
    async killRunOwner(runId) {
      const owner = await ownerOf(runId);
      if (owner !== 'dispatcher-1' && owner !== 'dispatcher-2') throw new Error(`run ${runId} has no dispatcher owner (${owner})`);
      const survivor = owner === 'dispatcher-1' ? 'dispatcher-2' : 'dispatcher-1';
      await cluster.kill(owner, 'SIGKILL');
      await waitFor(
        async () => {
          const r = await db.pool.query<{ n: number }>('select count(*)::int as n from shard_leases where owner = $1 and expires_at > now()', [survivor]);
          return r.rows[0]!.n === SHARD_COUNT;
        },
        { timeoutMs: 20_000, intervalMs: 200, description: 'survivor owns every shard' },
      );
      return { killed: owner, survivor };
    },
    async close() {
      api.client.close();
      await close();
    },
  };
}

function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

/**
 * The REST surface the tests drive (CONTRACT §5): a thin layer over the one typed client,
 * `@flowline/client`, keeping the signatures the test files use.
 */
export class ApiClient {
  /** the typed client itself, for routes this layer does not wrap */
  readonly client: FlowlineClient;

  constructor(readonly baseUrl: string) {
    this.client = createClient({ baseUrl });
  }

  /** Any request; the status and the parsed body, whatever the status (refusal tests assert both). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  async send(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await this.client.send(method, path, body === undefined ? {} : { body });
    return { status: res.status, body: res.body };
  }

  /** A refusal reads `what answered <status>: <body>` (the whole answer, for a failing test's log). */
  private async explain<T>(what: string, p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof ApiRequestError) throw new Error(`${what} answered ${err.status}: ${JSON.stringify(err.body)}`, { cause: err });
      throw err;
    }
  }

  async createDefinition(name: string, graph: unknown): Promise<string> {
    return (await this.explain('create definition', this.client.definitions.create({ name, graph }))).id;
  }

  async startRun(definitionId: string, input: unknown): Promise<string> {
    return (await this.explain('start run', this.client.runs.start(definitionId, { requestId: randomUUID(), input }))).runId;
  }

  getRun(runId: string): Promise<RunView> {
    return this.explain('get run', this.client.runs.get(runId));
  }

  async decide(runId: string, nodeKey: string, decision: 'Approve' | 'Reject', comment?: string): Promise<void> {
    const body = { operationId: randomUUID(), decision, ...(comment !== undefined ? { comment } : {}) };
    await this.explain(`decide ${nodeKey}`, this.client.runs.decide(runId, nodeKey, body));
  }

  /** Polls the run until `pred` holds. */
  waitForRun(runId: string, pred: (v: RunView) => boolean, timeoutMs = 30_000, description = 'run state'): Promise<RunView> {
    return waitFor(async () => {
      const v = await this.getRun(runId);
      return pred(v) ? v : false;
    }, { timeoutMs, intervalMs: 150, description });
  }

  /** Every event of the run, page after page. */
  async events(runId: string): Promise<{ seq: number; kind: string; nodeKey: string | null }[]> {
    return this.explain('events', this.client.runs.allEvents(runId));
  }
}

export const nodeOf = (v: RunView, key: string) => v.nodeRuns.find((n) => n.nodeKey === key);
