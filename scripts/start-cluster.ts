/**
 * `npm start`: a whole local Flowline — API (with the web console at /console, built first
 * when its build is missing or older than its sources), two dispatchers, one tool worker,
 * one LLM worker (the built-in scripted provider unless LLM_BASE_URL is set) — on
 * the Postgres and Redis found by `resolveInfra`, with the sample definitions seeded.
 * Ctrl-C (SIGINT) or SIGTERM stops every child, then the embedded servers.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, createPool } from '@flowline/db';
import { resolveInfra, type Infra } from './cluster-infra';
import { startCluster, seedSamples, waitForApi, ensureConsoleBuilt } from '@flowline/testing';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const apiPort = Number(process.env.PORT ?? 3000);
// dispatchers and workers serve /metrics, /livez and /readyz on consecutive ports from here
const opsBasePort = Number(process.env.OPS_BASE_PORT ?? 9464);

try {
  await ensureConsoleBuilt(rootDir, (line) => console.log(`flowline: ${line}`));
} catch (err) {
  console.error(`flowline: ${(err as Error).message}`);
  process.exit(1);
}

let infra: Infra;
try {
  infra = await resolveInfra(process.env, rootDir);
} catch (err) {
  console.error(`flowline: ${(err as Error).message}`);
  process.exit(1);
}
for (const note of infra.notes) console.log(`flowline: ${note}`);

// Migrate once here so the replicas do not race on a fresh database.
const pool = createPool(infra.databaseUrl);
await migrate(pool);
await pool.end();

const cluster = startCluster({
  rootDir,
  databaseUrl: infra.databaseUrl,
  redisUrl: infra.redisUrl,
  apiPort,
  // a person reads a terminal: pretty lines there, JSON lines anywhere else (a pipe, a file)
  pretty: process.stdout.isTTY === true,
  processes: [
    { label: 'api', service: 'api' },
    { label: 'dispatcher-1', service: 'dispatcher', env: { DISPATCHER_ID: 'dispatcher-1', OPS_PORT: String(opsBasePort) } },
    { label: 'dispatcher-2', service: 'dispatcher', env: { DISPATCHER_ID: 'dispatcher-2', OPS_PORT: String(opsBasePort + 1) } },
    { label: 'worker-tool', service: 'worker-tool', env: { OPS_PORT: String(opsBasePort + 2) } },
    { label: 'worker-llm', service: 'worker-llm', env: { OPS_PORT: String(opsBasePort + 3) } },
  ],
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`flowline: ${signal}, stopping the cluster`);
  await cluster.stop();
  await infra.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
for (const p of cluster.processes.values()) {
  void p.exited.then((code) => {
    if (!stopping) console.error(`flowline: ${p.spec.label} exited with code ${code}`);
  });
}

try {
  await waitForApi(cluster.apiUrl);
  const headers: Record<string, string> = {};
  const firstKey = process.env.API_KEYS?.split(',')[0]?.split(':')[1];
  if (firstKey) headers.authorization = `Bearer ${firstKey}`;
  const seeded = await seedSamples(cluster.apiUrl, join(rootDir, 'scripts', 'samples'), headers);
  if (seeded.length) console.log(`flowline: seeded sample definitions: ${seeded.join(', ')}`);
  const metrics = [
    `api ${cluster.apiUrl}/metrics`,
    ...['dispatcher-1', 'dispatcher-2', 'worker-tool', 'worker-llm'].map((label, i) => `${label} http://127.0.0.1:${opsBasePort + i}/metrics`),
  ].join('\n           ');
  console.log(`\nflowline is up:\n  console  ${cluster.apiUrl}/console/\n  API      ${cluster.apiUrl}/v1\n  docs     ${cluster.apiUrl}/docs\n  health   ${cluster.apiUrl}/healthz\n  metrics  ${metrics}\n  Ctrl-C to stop\n`);
} catch (err) {
  console.error(`flowline: ${(err as Error).message}`);
  await shutdown('startup failure');
}
