/**
 * `npm start`: a whole local Flowline — API (with the web console at /console, built first
 * when its build is missing or older than its sources), two dispatchers, one tool worker,
 * one LLM worker (the built-in scripted provider unless LLM_BASE_URL is set) — on
 * the Postgres and Redis found by `resolveInfra`, with the sample definitions seeded.
 * Ctrl-C (SIGINT) or SIGTERM stops every child, then the embedded servers.
 *
 * "up" is printed once every process answers `/readyz` (the API's says a dispatcher holds
 * the shards). A process that exits before that (its ops port taken, a bad setting) stops the
 * whole cluster: one line names it and why, and `npm start` exits 1 — never a cluster half up.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, createPool } from '@flowline/db';
import { resolveInfra, type Infra } from './cluster-infra';
import { startCluster, seedSamples, waitForApi, ensureConsoleBuilt, waitFor } from '@flowline/testing';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const apiPort = Number(process.env.PORT ?? 3000);
// dispatchers and workers serve /metrics, /livez and /readyz on consecutive ports from here
const opsBasePort = Number(process.env.OPS_BASE_PORT ?? 9464);
/** How long every process has to answer `/readyz` before `npm start` gives up. */
const BOOT_TIMEOUT_MS = Number(process.env.BOOT_TIMEOUT_MS ?? 180_000);
if (!Number.isInteger(BOOT_TIMEOUT_MS) || BOOT_TIMEOUT_MS <= 0) {
  console.error(`flowline: BOOT_TIMEOUT_MS must be a positive integer of milliseconds (got ${process.env.BOOT_TIMEOUT_MS})`);
  process.exit(1);
}

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

// the last error each process logged: what a process that exits at boot is reported with
const lastError = new Map<string, string>();
/** The reason in a service's log line: its error's message, else the line's message (level error or fatal). */
function errorOf(line: string): string | null {
  let entry: { level?: unknown; msg?: unknown; err?: { message?: unknown } };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    // not a log line (a crash before the logger): an `Error: …` line is the reason
    return /^\s*\w*Error\b/.test(line) ? line.trim() : null;
  }
  if (typeof entry.level !== 'number' || entry.level < 50) return null;
  if (typeof entry.err?.message === 'string') return entry.err.message;
  return typeof entry.msg === 'string' ? entry.msg : null;
}

const cluster = startCluster({
  rootDir,
  databaseUrl: infra.databaseUrl,
  redisUrl: infra.redisUrl,
  apiPort,
  // a person reads a terminal: pretty lines there, JSON lines anywhere else (a pipe, a file)
  pretty: process.stdout.isTTY === true,
  onRawLine: (label, line) => {
    const err = errorOf(line);
    if (err !== null && !lastError.has(label)) lastError.set(label, err);
  },
  processes: [
    { label: 'api', service: 'api' },
    { label: 'dispatcher-1', service: 'dispatcher', env: { DISPATCHER_ID: 'dispatcher-1', OPS_PORT: String(opsBasePort) } },
    { label: 'dispatcher-2', service: 'dispatcher', env: { DISPATCHER_ID: 'dispatcher-2', OPS_PORT: String(opsBasePort + 1) } },
    { label: 'worker-tool', service: 'worker-tool', env: { OPS_PORT: String(opsBasePort + 2) } },
    { label: 'worker-llm', service: 'worker-llm', env: { OPS_PORT: String(opsBasePort + 3) } },
  ],
});

let stopping = false;
async function shutdown(signal: string, exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`flowline: ${signal}, stopping the cluster`);
  await cluster.stop();
  await infra.stop();
  process.exit(exitCode);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
let booting = true;
/** Rejects when a process exits while the cluster boots (a process exiting later is only reported). */
const exitedAtBoot = new Promise<never>((_, reject) => {
  for (const p of cluster.processes.values()) {
    void p.exited.then((code) => {
      if (stopping) return;
      const why = lastError.get(p.spec.label) ?? 'no error logged (see its lines above)';
      if (booting) reject(new Error(`${p.spec.label} exited during boot (code ${code}): ${why}`));
      else console.error(`flowline: ${p.spec.label} exited with code ${code}: ${why}`);
    });
  }
});
exitedAtBoot.catch(() => undefined);

/** Every process's readiness URL: the API's, and each other one's on its ops port. */
const readyUrls = [
  { label: 'api', url: `${cluster.apiUrl}/readyz` },
  ...['dispatcher-1', 'dispatcher-2', 'worker-tool', 'worker-llm'].map((label, i) => ({ label, url: `http://127.0.0.1:${opsBasePort + i}/readyz` })),
];
async function answersReady(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}
async function allReady(): Promise<void> {
  const pending = new Set(readyUrls);
  try {
    await waitFor(
      async () => {
        for (const r of [...pending]) if (await answersReady(r.url)) pending.delete(r);
        return pending.size === 0;
      },
      { timeoutMs: BOOT_TIMEOUT_MS, intervalMs: 250 },
    );
  } catch {
    throw new Error(`not ready within ${BOOT_TIMEOUT_MS} ms: ${[...pending].map((r) => `${r.label} (${r.url})`).join(', ')}`);
  }
}

try {
  await Promise.race([exitedAtBoot, waitForApi(cluster.apiUrl, BOOT_TIMEOUT_MS)]);
  const headers: Record<string, string> = {};
  const firstKey = process.env.API_KEYS?.split(',')[0]?.split(':')[1];
  if (firstKey) headers.authorization = `Bearer ${firstKey}`;
  const seeded = await seedSamples(cluster.apiUrl, join(rootDir, 'scripts', 'samples'), headers);
  if (seeded.length) console.log(`flowline: seeded sample definitions: ${seeded.join(', ')}`);
  await Promise.race([exitedAtBoot, allReady()]);
  booting = false;
  const metrics = [
    `api ${cluster.apiUrl}/metrics`,
    ...['dispatcher-1', 'dispatcher-2', 'worker-tool', 'worker-llm'].map((label, i) => `${label} http://127.0.0.1:${opsBasePort + i}/metrics`),
  ].join('\n           ');
  console.log(`\nflowline is up:\n  console  ${cluster.apiUrl}/console/\n  API      ${cluster.apiUrl}/v1\n  docs     ${cluster.apiUrl}/docs\n  health   ${cluster.apiUrl}/healthz\n  metrics  ${metrics}\n  Ctrl-C to stop\n`);
} catch (err) {
  console.error(`flowline: ${(err as Error).message}`);
  await shutdown('startup failure', 1);
}
