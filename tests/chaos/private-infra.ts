/**
 * Private Postgres and Redis for the chaos suite: a Postgres cluster of its own
 * (initdb into a temp dir, pg_ctl on a free port) and a redis-server of its own, so
 * restarting or flushing them disturbs nothing else on the machine.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pgAnswers, redisAnswers } from '@flowline/testing';

const PG_BIN = process.env.CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A Postgres cluster owned by this process. */
export interface PrivatePostgres {
  /** superuser URL of the `postgres` database */
  url: string;
  port: number;
  dataDir: string;
  /** `pg_ctl restart -m fast`: every connection drops, the data stays. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A redis-server owned by this process. */
export interface PrivateRedis {
  url: string;
  port: number;
  /** `REDIS_CLUSTER_NODES` when this Redis is a cluster */
  clusterNodes?: string;
  /** Kills the server and starts a new one on the same port (no persistence: the data is gone). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}

/** Runs a Postgres binary, as the `postgres` OS user when we are root (initdb refuses root). */
function pgRun(dir: string, bin: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? 'runuser' : join(PG_BIN, bin);
  const argv = asRoot ? ['-u', 'postgres', '--', join(PG_BIN, bin), ...args] : args;
  const r = spawnSync(cmd, argv, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}

/** {@link pgRun} without blocking the event loop. */
function pgRunAsync(dir: string, bin: string, args: string[]): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? 'runuser' : join(PG_BIN, bin);
  const argv = asRoot ? ['-u', 'postgres', '--', join(PG_BIN, bin), ...args] : args;
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr}`))));
  });
}

/** initdb + pg_ctl start on a free port; the cluster is deleted by `stop`. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'flowline-chaos-pg-'));
  const dataDir = join(root, 'data');
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(root, uid, gid);
  }
  pgRun(root, 'initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  writeFileSync(
    join(root, 'extra.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      'max_connections = 300',
      'shared_buffers = 128MB',
      'fsync = on',
      'synchronous_commit = on',
      "idle_in_transaction_session_timeout = '30s'",
      'logging_collector = off',
    ].join('\n'),
  );
  writeFileSync(join(dataDir, 'postgresql.conf'), `\ninclude '${root}/extra.conf'\n`, { flag: 'a' });
  pgRun(root, 'pg_ctl', ['-D', dataDir, '-l', join(root, 'pg.log'), '-w', 'start']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntil(() => pgAnswers(url), 30_000, 'private Postgres');
  let stopped = false;
  return {
    url,
    port,
    dataDir,
    async restart() {
      // Asynchronous: the harness keeps posting, deciding and killing while Postgres restarts.
      await pgRunAsync(root, 'pg_ctl', ['-D', dataDir, '-l', join(root, 'pg.log'), '-w', '-m', 'fast', 'restart']);
      await waitUntil(() => pgAnswers(url), 30_000, 'restarted private Postgres');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        pgRun(root, 'pg_ctl', ['-D', dataDir, '-w', '-m', 'immediate', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

function spawnRedisOn(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

function killAndWait(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

/** redis-server on a free port, no persistence. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc = spawnRedisOn(port);
  await waitUntil(() => redisAnswers(url), 15_000, 'private Redis');
  return {
    url,
    port,
    async restart() {
      await killAndWait(proc);
      // The port may linger briefly; retry the bind until the server answers.
      const until = Date.now() + 15_000;
      for (;;) {
        proc = spawnRedisOn(port);
        try {
          await waitUntil(() => redisAnswers(url), 3_000, 'restarted private Redis');
          return;
        } catch (err) {
          await killAndWait(proc);
          if (Date.now() > until) throw err;
        }
      }
    },
    stop: () => killAndWait(proc),
  };
}
