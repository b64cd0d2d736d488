/**
 * The chaos topology on private infrastructure: N API replicas, M dispatchers, J tool
 * workers as real child processes (@flowline/testing `startCluster`), a supervisor that restarts any
 * process that exits, and the harness's own pool on the private database.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, migrate, type Pool } from '@flowline/db';
import { startFakeLlm, startRedisCluster, uniquePrefix, type FakeLlmServer, ensureDatabase, freePort, startCluster, waitForApi, type Cluster, type ManagedProcess, type ProcessSpec } from '@flowline/testing';
import { ExitLedger } from './exit-ledger';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './private-infra';
import { CHAOS_SCHEMA_SQL } from './tools/effects-tool';

export const ROOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARD_COUNT = 12;

export interface TopologyOptions {
  apis: number;
  dispatchers: number;
  toolWorkers: number;
  /** LLM workers against an in-harness fake OpenAI-compatible server */
  llmWorkers: number;
  /** extra environment for every process */
  env?: Record<string, string>;
  /** every output line of every process */
  onLine?: (line: string) => void;
  /** a 3-master Redis Cluster (REDIS_CLUSTER_NODES) instead of a private redis-server; it cannot be restarted @default false */
  redisCluster?: boolean;
}

export interface ChaosCluster {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  databaseUrl: string;
  /** harness pool on the private database (idle errors ignored: Postgres is restarted on purpose) */
  pool: Pool;
  apiUrls: string[];
  cluster: Cluster;
  /** labels a fault may kill: dispatchers and workers */
  killable: string[];
  /** SIGKILL one process; the supervisor starts it again */
  kill(label: string): Promise<void>;
  /** every exit judged: only the harness's own kills -9 are expected (a violation otherwise) */
  exits: ExitLedger;
  close(): Promise<void>;
}

/** A Redis Cluster in the shape of a private Redis (its `url` is the first node's); restarting it is not supported. */
async function startClusterRedis(): Promise<PrivateRedis> {
  const rc = await startRedisCluster();
  return {
    url: rc.url,
    port: rc.nodes[0]!.port,
    clusterNodes: rc.nodesEnv,
    restart: () => Promise.reject(new Error('a Redis Cluster is not restarted by the chaos harness')),
    stop: rc.stop,
  };
}

/** Starts private Postgres and Redis, migrates, creates the chaos tables, starts the processes and waits until every shard is leased. */
export async function startChaosCluster(o: TopologyOptions): Promise<ChaosCluster> {
  const [pgServer, redis] = await Promise.all([startPrivatePostgres(), o.redisCluster ? startClusterRedis() : startPrivateRedis()]);
  const fakeLlm: FakeLlmServer | null = o.llmWorkers > 0 ? await startFakeLlm({ fallback: { content: 'ok' } }) : null;
  const databaseUrl = await ensureDatabase(pgServer.url, 'flowline');
  const pool = createPool(databaseUrl, { max: 6, applicationName: 'flowline-chaos' });
  pool.on('error', () => undefined);
  await migrate(pool);
  await pool.query(CHAOS_SCHEMA_SQL);

  const apiPorts: number[] = [];
  for (let i = 0; i < o.apis; i++) apiPorts.push(await freePort());
  const processes: ProcessSpec[] = [];
  for (let i = 1; i <= o.apis; i++) processes.push({ label: `api-${i}`, service: 'api', env: { PORT: String(apiPorts[i - 1]) } });
  for (let i = 1; i <= o.dispatchers; i++) processes.push({ label: `dispatcher-${i}`, service: 'dispatcher', env: { DISPATCHER_ID: `dispatcher-${i}` } });
  for (let i = 1; i <= o.toolWorkers; i++) processes.push({ label: `worker-tool-${i}`, service: 'worker-tool' });
  for (let i = 1; i <= o.llmWorkers; i++) {
    processes.push({ label: `worker-llm-${i}`, service: 'worker-llm', env: { LLM_BASE_URL: fakeLlm!.url, LLM_MODEL: 'fake-model', LLM_API_KEY: 'fake' } });
  }

  let stopping = false;
  const exits = new ExitLedger();
  const cluster = startCluster({
    rootDir: ROOT_DIR,
    databaseUrl,
    redisUrl: redis.url,
    apiPort: apiPorts[0]!,
    queuePrefix: uniquePrefix(),
    env: {
      SHARD_COUNT: String(SHARD_COUNT),
      SHARD_LEASE_MS: '2000',
      DISPATCH_SWEEP_MS: '200',
      INFLIGHT_CHECK_EVERY_SWEEPS: '5',
      WF_TEST_TOOLS: '1',
      TOOL_MODULES: './tests/chaos/tools/effects-tool.ts',
      CHAOS_EFFECTS_URL: databaseUrl,
      LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
      ...(redis.clusterNodes ? { REDIS_CLUSTER_NODES: redis.clusterNodes } : {}),
      ...o.env,
    },
    processes: [],
    onLine: o.onLine ?? (() => undefined),
  });

  const supervise = (m: ManagedProcess): void => {
    void m.exited.then((code) => {
      if (stopping) return;
      exits.exited(m.spec.label, code, m.proc.signalCode);
      setTimeout(() => {
        if (!stopping) supervise(cluster.launch(m.spec));
      }, 200);
    });
  };
  for (const spec of processes) supervise(cluster.launch(spec));

  const close = async () => {
    stopping = true;
    exits.stopping();
    await cluster.stop(5000);
    await pool.end().catch(() => undefined);
    await redis.stop();
    await pgServer.stop();
    await fakeLlm?.close();
  };
  const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
  try {
    for (const url of apiUrls) await waitForApi(url, 90_000);
    const until = Date.now() + 90_000;
    for (;;) {
      const r = await pool.query<{ n: number }>('select count(*)::int as n from shard_leases where owner is not null and expires_at > now()');
      if (r.rows[0]!.n === SHARD_COUNT) break;
      if (Date.now() > until) throw new Error('shards were not all leased within 90 s');
      await new Promise((res) => setTimeout(res, 200));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    pg: pgServer,
    redis,
    databaseUrl,
    pool,
    apiUrls,
    cluster,
    killable: processes.filter((p) => p.service !== 'api').map((p) => p.label),
    async kill(label) {
      const p = cluster.processes.get(label);
      if (!p || p.proc.exitCode !== null || p.proc.signalCode !== null) return;
      exits.killing(label);
      await cluster.kill(label, 'SIGKILL');
    },
    exits,
    close,
  };
}
