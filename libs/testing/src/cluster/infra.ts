/**
 * Postgres and Redis for a cluster of test or local processes: whether the local defaults
 * answer, a database created on demand, a free port, a throwaway `redis-server`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import pg from 'pg';

export const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
export const LOCAL_REDIS = 'redis://127.0.0.1:6379';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** True when `SELECT 1` answers within 2 s. */
export async function pgAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** True when Redis answers PING within 2 s. */
export function redisAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = new Socket();
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.on('error', () => done(false));
    sock.connect(Number(u.port || 6379), u.hostname, () => sock.write('PING\r\n'));
    sock.on('data', (d) => done(d.toString().startsWith('+PONG') || d.toString().startsWith('-NOAUTH')));
  });
}

/** Creates `name` on the server of `adminUrl` when missing; returns the URL of that database. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '')}"`);
  } catch (err) {
    // Two starters racing: the database exists now, which is all we need.
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Starts a throwaway `redis-server` on a free port (no persistence). */
export async function spawnRedis(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await redisAnswers(url)); i++) await new Promise((r) => setTimeout(r, 50));
  return { url, proc };
}

export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}
