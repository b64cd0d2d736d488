/**
 * A local Flowline cluster as real child processes (API, dispatchers, workers), each
 * a single `node --import tsx` process (or plain `node dist/main.js` with `compiled`) so a
 * signal (kill -9 included) reaches the service itself. Used by `npm start`, the end-to-end
 * tests and the bench (compiled).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { logLineFormatter } from './log-lines';

export type ServiceName = 'api' | 'dispatcher' | 'worker-tool' | 'worker-llm';

export interface ProcessSpec {
  /** unique label, e.g. "dispatcher-1" (log prefix) */
  label: string;
  service: ServiceName;
  env?: Record<string, string>;
}

export interface ManagedProcess {
  spec: ProcessSpec;
  proc: ChildProcess;
  exited: Promise<number | null>;
}

export interface ClusterOptions {
  rootDir: string;
  databaseUrl: string;
  redisUrl: string;
  apiPort: number;
  /** BullMQ prefix shared by every process */
  queuePrefix?: string;
  /** extra environment for every process */
  env?: Record<string, string>;
  processes: ProcessSpec[];
  /** receives every prefixed output line; default: stdout */
  onLine?: (line: string) => void;
  /** receives every output line as the process wrote it, with its label (e.g. to tell why it exited) */
  onRawLine?: (label: string, line: string) => void;
  /** pretty-print the services' JSON log lines (pino-pretty); `npm start` sets it when stdout is a terminal @default false */
  pretty?: boolean;
  /** run each service's compiled `services/<svc>/dist/main.js` under plain node (`npm run build` first; see {@link buildServices}) instead of its sources under tsx @default false */
  compiled?: boolean;
  /** each process writes a V8 CPU profile to `<cpuProfileDir>/<label>` when it exits (`--cpu-prof`); none when unset */
  cpuProfileDir?: string;
  /** the profiles' sampling interval in µs @default 1000 (V8's) */
  cpuProfileIntervalUs?: number;
}

export interface Cluster {
  apiUrl: string;
  processes: Map<string, ManagedProcess>;
  /** Starts (or restarts) one process. */
  launch(spec: ProcessSpec): ManagedProcess;
  /** Sends a signal to one process and waits for it to exit. */
  kill(label: string, signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM to all, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const COLORS = [36, 33, 35, 32, 34, 31];

/** Starts the processes; resolves once they are spawned (not ready: see `waitForApi`). */
export function startCluster(o: ClusterOptions): Cluster {
  const processes = new Map<string, ManagedProcess>();
  const onLine = o.onLine ?? ((l: string) => process.stdout.write(`${l}\n`));
  const baseEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    ...(o.queuePrefix ? { QUEUE_PREFIX: o.queuePrefix } : {}),
    ...o.env,
  };
  let n = 0;
  const format = logLineFormatter({ pretty: o.pretty ?? false, colorize: process.stdout.isTTY });

  function launch(spec: ProcessSpec): ManagedProcess {
    const color = COLORS[n++ % COLORS.length];
    const tag = process.stdout.isTTY ? `\x1b[${color}m[${spec.label}]\x1b[0m` : `[${spec.label}]`;
    const env = { ...baseEnv, ...(spec.service === 'api' ? { PORT: String(o.apiPort) } : {}), ...spec.env };
    // CLUSTER_CPU_PROF=<dir>: every service writes a V8 CPU profile there when it exits (not allowed in NODE_OPTIONS)
    const profDir = o.cpuProfileDir ? join(o.cpuProfileDir, spec.label) : process.env.CLUSTER_CPU_PROF;
    const prof = profDir
      ? ['--cpu-prof', '--cpu-prof-dir', profDir, ...(o.cpuProfileIntervalUs ? ['--cpu-prof-interval', String(o.cpuProfileIntervalUs)] : [])]
      : [];
    const entry = o.compiled ? [join('services', spec.service, 'dist', 'main.js')] : ['--import', 'tsx', join('services', spec.service, 'src', 'main.ts')];
    const proc = spawn(process.execPath, [...prof, ...entry], {
      cwd: o.rootDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Own process group: a terminal's Ctrl-C reaches only the starter, which forwards ONE
      // signal (a second one makes a service skip its graceful shutdown).
      detached: true,
    });
    for (const stream of [proc.stdout, proc.stderr]) {
      if (stream)
        createInterface({ input: stream }).on('line', (line) => {
          o.onRawLine?.(spec.label, line);
          onLine(`${tag} ${format(line)}`);
        });
    }
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const managed = { spec, proc, exited };
    processes.set(spec.label, managed);
    return managed;
  }

  for (const spec of o.processes) launch(spec);
  // Detached children would outlive a starter that dies abruptly: take them down with it.
  process.once('exit', () => {
    for (const p of processes.values()) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  });

  return {
    apiUrl: `http://127.0.0.1:${o.apiPort}`,
    processes,
    launch,
    async kill(label, signal) {
      const p = processes.get(label);
      if (!p || p.proc.exitCode !== null || p.proc.signalCode !== null) return;
      p.proc.kill(signal);
      await p.exited;
    },
    async stop(graceMs = 8000) {
      const live = [...processes.values()].filter((p) => p.proc.exitCode === null && p.proc.signalCode === null);
      for (const p of live) p.proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        for (const p of live) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
      }, graceMs);
      await Promise.all(live.map((p) => p.exited));
      clearTimeout(timer);
    },
  };
}

/**
 * `npm run build` of the given services and the libs they import (turbo: cached when nothing
 * changed), for a cluster started with `compiled`. Throws with the build's output when it fails.
 */
export function buildServices(rootDir: string, services: readonly ServiceName[]): void {
  const r = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only', ...services.map((s) => `--filter=@flowline/${s}...`)], {
    cwd: rootDir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`npm run build failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
}

/** Waits until `GET /healthz` answers 200. */
export async function waitForApi(apiUrl: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`${apiUrl}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`API at ${apiUrl} did not become healthy within ${timeoutMs} ms`);
}

interface Sample {
  name: string;
  description?: string;
  graph: unknown;
}

/** Posts every `scripts/samples/*.json` whose name is not yet defined; returns the names posted. */
export async function seedSamples(apiUrl: string, samplesDir: string, headers: Record<string, string> = {}): Promise<string[]> {
  const res = await fetch(`${apiUrl}/v1/definitions?limit=200`, { headers });
  if (!res.ok) throw new Error(`listing definitions answered ${res.status}`);
  const existing = new Set(((await res.json()) as { items: { name: string }[] }).items.map((d) => d.name));
  const posted: string[] = [];
  for (const file of readdirSync(samplesDir).filter((f) => f.endsWith('.json')).sort()) {
    const sample = JSON.parse(readFileSync(join(samplesDir, file), 'utf8')) as Sample;
    if (existing.has(sample.name)) continue;
    const r = await fetch(`${apiUrl}/v1/definitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(sample),
    });
    if (!r.ok) throw new Error(`seeding ${file} answered ${r.status}: ${await r.text()}`);
    posted.push(sample.name);
  }
  return posted;
}
