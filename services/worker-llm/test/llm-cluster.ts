/**
 * A whole cluster of child processes (api, dispatcher, worker-tool, worker-llm) whose LLM
 * lane talks to a fake OpenAI-compatible server: a database of its own, a unique BullMQ
 * prefix on the test Redis, every shard leased before a test starts.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupRedisPrefix, createTestDatabase, testRedisUrl, uniquePrefix, waitFor, type FakeLlmServer, type TestDatabase, freePort, startCluster, waitForApi, type Cluster, ApiClient } from '@flowline/testing';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SHARD_COUNT = 4;

export interface LlmCluster {
  cluster: Cluster;
  db: TestDatabase;
  api: ApiClient;
  /** the dispatcher's process label */
  dispatcher: string;
  /** output lines of every process (dumped when a test fails) */
  lines: string[];
  close(): Promise<void>;
}

/** Starts the cluster against `fake` (model `fake-model` by default); `env` reaches every process. */
export async function startLlmCluster(fake: FakeLlmServer, env: Record<string, string> = {}): Promise<LlmCluster> {
  const db = await createTestDatabase();
  const prefix = uniquePrefix();
  const lines: string[] = [];
  const cluster = startCluster({
    rootDir,
    databaseUrl: db.url,
    redisUrl: testRedisUrl(),
    apiPort: await freePort(),
    queuePrefix: prefix,
    env: {
      SHARD_COUNT: String(SHARD_COUNT),
      SHARD_LEASE_MS: '2000',
      DISPATCH_SWEEP_MS: '200',
      LOG_LEVEL: 'warn',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake-model',
      ...env,
    },
    processes: [
      { label: 'api', service: 'api' },
      { label: 'dispatcher', service: 'dispatcher', env: { DISPATCHER_ID: 'dispatcher-1' } },
      { label: 'worker-tool', service: 'worker-tool' },
      { label: 'worker-llm', service: 'worker-llm' },
    ],
    onLine: (l) => void lines.push(l),
  });
  const close = async () => {
    await cluster.stop(5_000);
    await db.drop();
    await cleanupRedisPrefix(prefix);
  };
  try {
    await waitForApi(cluster.apiUrl, 60_000);
    await waitFor(
      async () => {
        const r = await db.pool.query<{ n: number }>('select count(*)::int as n from shard_leases where owner is not null and expires_at > now()');
        return r.rows[0]!.n === SHARD_COUNT;
      },
      { timeoutMs: 45_000, intervalMs: 200, description: 'every shard leased' },
    );
  } catch (err) {
    process.stdout.write(`${lines.slice(-80).join('\n')}\n`);
    await close();
    throw err;
  }
  return { cluster, db, api: new ApiClient(cluster.apiUrl), dispatcher: 'dispatcher', lines, close };
}
