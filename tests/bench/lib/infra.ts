/**
 * The bench's own servers: a throwaway Postgres 15 cluster (initdb in a temp dir, loaded
 * with pg_stat_statements so statements can be counted, durable defaults: fsync and
 * synchronous_commit on) and a redis-server of its own (@flowline/testing `spawnRedis`). When no
 * Postgres binaries are found the bench falls back to the local server and says so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, LOCAL_PG, pgAnswers, spawnRedis } from '@flowline/testing';

export interface BenchPostgres {
  /** admin URL (database `postgres`) */
  adminUrl: string;
  /** pg_stat_statements is loaded */
  statements: boolean;
  /** the server is the bench's own (WAL deltas are not shared with other users) */
  own: boolean;
  version: string;
  note: string;
  stop(): Promise<void>;
}

const PG_BIN_DIRS = [
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
  '/usr/lib/postgresql/17/bin',
];

function pgBinDir(): string | null {
  return PG_BIN_DIRS.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) ?? null;
}

/** Runs a command, as user `postgres` when this process is root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', cmd, ...args] : [cmd, ...args];
}

/** Starts an own Postgres with pg_stat_statements; falls back to the local server. */
export async function startPostgres(): Promise<BenchPostgres> {
  const bin = pgBinDir();
  if (bin) {
    try {
      return await startOwnPostgres(bin);
    } catch (err) {
      process.stderr.write(`own Postgres failed (${(err as Error).message}); using the local server\n`);
    }
  }
  if (!(await pgAnswers(LOCAL_PG)))
    throw new Error('no Postgres: install postgresql (initdb) or run one on 127.0.0.1:5432');
  const version = await serverVersion(LOCAL_PG);
  return {
    adminUrl: LOCAL_PG,
    statements: false,
    own: false,
    version,
    note: 'local shared server (WAL deltas include other users)',
    stop: async () => undefined,
  };
}

async function startOwnPostgres(bin: string): Promise<BenchPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'flowline-bench-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const [c0, ...a0] = asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const init = spawnSync(c0!, a0, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const flags = [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-h',
    '127.0.0.1',
    '-c',
    'shared_preload_libraries=pg_stat_statements',
    '-c',
    'pg_stat_statements.track=all',
    '-c',
    'max_connections=400',
    '-c',
    'shared_buffers=256MB',
  ];
  const [c1, ...a1] = asPostgres(join(bin, 'postgres'), flags);
  const proc: ChildProcess = spawn(c1!, a1, { stdio: 'ignore', detached: true });
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let up = false;
  for (let i = 0; i < 150 && !up; i++) {
    up = await pgAnswers(adminUrl);
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) {
    proc.kill('SIGKILL');
    throw new Error('own Postgres did not answer within 15 s');
  }
  // runuser is the direct child: signal the whole process group so the server goes too
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-proc.pid!, sig);
    } catch {
      // already gone
    }
  };
  process.once('exit', () => signal('SIGQUIT'));
  const version = await serverVersion(adminUrl);
  return {
    adminUrl,
    statements: true,
    own: true,
    version,
    note: `own server (${bin}, port ${port}, fsync on, synchronous_commit on, shared_buffers 256MB)`,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        signal('SIGINT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null) signal('SIGQUIT');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function serverVersion(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
  } finally {
    await c.end();
  }
}

/** Creates an empty database `name` (dropping an old one) and returns its URL. */
/** The URL of database `name` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function freshDatabase(adminUrl: string, name: string, statements: boolean): Promise<string> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`drop database if exists "${name}" with (force)`);
    await c.query(`create database "${name}"`);
  } finally {
    await c.end();
  }
  const url = databaseUrl(adminUrl, name);
  if (statements) {
    const d = new pg.Client({ connectionString: url });
    await d.connect();
    await d.query('create extension if not exists pg_stat_statements').finally(() => d.end());
  }
  return url;
}

export interface BenchRedis {
  url: string;
  version: string;
  stop(): Promise<void>;
}

/** A redis-server of the bench's own on a free port. */
export async function startRedis(): Promise<BenchRedis> {
  const { url, proc } = await spawnRedis();
  const v =
    spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.match(/v=([\d.]+)/)?.[1] ??
    'unknown';
  return {
    url,
    version: v,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
