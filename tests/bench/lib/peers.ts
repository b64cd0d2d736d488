/**
 * Peers side by side: every folder of tests/bench/peers with a runner (`run.ts`,
 * `run.mjs` or `run.js`) is installed on demand (`npm ci` with a lockfile, else
 * `npm install`; skipped while its node_modules is newer than the lockfile) and run
 * as a child process per workload; it prints one JSON line. A peer that fails to
 * install or run is reported as "n/a (reason)".
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rootDir } from './flowline';

export const PEERS_DIR = join(rootDir, 'tests', 'bench', 'peers');

export interface PeerLine {
  peer: string;
  workload: string;
  params: Record<string, number>;
  hopP50Ms?: number | null;
  hopP99Ms?: number | null;
  latencyMs?: number | null;
  runsPerSec?: number | null;
  nodesPerSec?: number | null;
  notes?: string;
  extra?: unknown;
}

export interface PeerOutcome {
  peer: string;
  workload: string;
  param: number;
  line: PeerLine | null;
  error: string | null;
  seconds: number;
}

export interface Peer {
  name: string;
  dir: string;
  runner: string;
  /** false for the speed reference without Postgres durability (raw BullMQ) */
  durable: boolean;
}

/** Peer folders with a runner, in name order. */
export function discoverPeers(only?: string[]): Peer[] {
  if (!existsSync(PEERS_DIR)) return [];
  return readdirSync(PEERS_DIR)
    .filter((n) => statSync(join(PEERS_DIR, n)).isDirectory() && !n.startsWith('.') && n !== 'node_modules')
    .filter((n) => !only || only.includes(n))
    .sort()
    .flatMap((name) => {
      const dir = join(PEERS_DIR, name);
      const runner = ['run.ts', 'run.mjs', 'run.js'].find((f) => existsSync(join(dir, f)));
      if (!runner || !existsSync(join(dir, 'package.json'))) return [];
      return [{ name, dir, runner, durable: !/bullmq/i.test(name) }];
    });
}

/** Peer folders present but without a runner or package.json (reported as n/a). */
export function incompletePeers(): string[] {
  if (!existsSync(PEERS_DIR)) return [];
  const ok = new Set(discoverPeers().map((p) => p.name));
  return readdirSync(PEERS_DIR)
    .filter((n) => statSync(join(PEERS_DIR, n)).isDirectory() && n !== 'node_modules' && !ok.has(n))
    .sort();
}

/** Installs the peer's dependencies when needed; returns an error text or null. */
export function installPeer(p: Peer, force: boolean): string | null {
  const lock = join(p.dir, 'package-lock.json');
  const marker = join(p.dir, 'node_modules', '.package-lock.json');
  const pkg = join(p.dir, 'package.json');
  const fresh =
    existsSync(marker) &&
    statSync(marker).mtimeMs >= statSync(pkg).mtimeMs &&
    (!existsSync(lock) || statSync(marker).mtimeMs >= statSync(lock).mtimeMs - 1000);
  if (fresh && !force) return null;
  const args = existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'];
  const r = spawnSync('npm', args, { cwd: p.dir, encoding: 'utf8', timeout: 600_000 });
  if (r.status === 0) return null;
  return `npm ${args[0]} failed: ${(r.stderr || r.stdout || String(r.error ?? '')).trim().split('\n').slice(-3).join(' ').slice(0, 240)}`;
}

/** Runs one workload of one peer; never throws. */
export function runPeer(
  p: Peer,
  workload: 'W1' | 'W2' | 'W3',
  param: number,
  reps: number,
  env: Record<string, string>,
  timeoutS: number,
): Promise<PeerOutcome> {
  const flag = workload === 'W1' ? '--n' : workload === 'W2' ? '--k' : '--m';
  const args = [
    ...(p.runner.endsWith('.ts') ? ['--import', 'tsx'] : []),
    p.runner,
    '--workload',
    workload,
    flag,
    String(param),
    '--reps',
    String(reps),
    '--timeout-s',
    String(timeoutS),
  ];
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: p.dir,
      env: { ...(process.env as Record<string, string>), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (timeoutS + 30) * 1000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - t0) / 1000;
      const jsonLine = out
        .split('\n')
        .reverse()
        .find((l) => l.trim().startsWith('{'));
      const line = parseLine(jsonLine);
      const failedNote = line?.notes?.startsWith('FAILED') ? line.notes : null;
      const error =
        code === 0 && line && !failedNote
          ? null
          : (failedNote ?? `exit ${code ?? signal}: ${errorLine(err)}`);
      resolve({ peer: p.name, workload, param, line: error ? null : line, error, seconds });
    });
  });
}

function parseLine(text: string | undefined): PeerLine | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as PeerLine;
  } catch {
    return null;
  }
}

/** The most telling line of a runner's stderr: the first error line, else the last line. */
function errorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const e =
    lines.find((l) => /\b\w*Error\b|FAILED|failed/.test(l)) ?? lines[lines.length - 1] ?? 'no result line';
  return e.slice(0, 200);
}
