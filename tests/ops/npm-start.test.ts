/**
 * `npm start` (scripts/start-cluster.ts) is up whole or not at all: when one process cannot
 * boot — here the tool worker, whose ops port another program holds — the launcher stops every
 * other process and exits non-zero with one line naming that process and why.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, freePort } from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));

async function listening(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/livez`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  it('exits non-zero naming the process that could not boot (its ops port taken), and leaves nothing running', async () => {
    const [db, redis] = [await createTestDatabase(), createTestRedis()];
    const apiPort = await freePort();
    const opsBase = await freePort();
    // the tool worker's ops port is OPS_BASE_PORT + 2: another program holds it
    const squatter: Server = createServer();
    await new Promise<void>((resolve, reject) => {
      squatter.once('error', reject);
      squatter.listen(opsBase + 2, () => resolve());
    });
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-cluster.ts'], {
        cwd: rootDir,
        env: { ...process.env, DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, PORT: String(apiPort), OPS_BASE_PORT: String(opsBase), LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGTERM');
          resolve(-1);
        }, 60_000);
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code, `${out}\n${err}`).toBe(1);
      const line = err.split('\n').find((l) => l.startsWith('flowline: worker-tool exited during boot'));
      expect(line, err).toMatch(/^flowline: worker-tool exited during boot \(code 1\): listen EADDRINUSE: address already in use .*:\d+$/);
      expect(line).toContain(String(opsBase + 2));
      expect(out).not.toContain('flowline is up');
      // every other process was stopped with it
      expect(await listening(apiPort)).toBe(false);
      expect(await listening(opsBase)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
      await redis.cleanup();
      await db.drop();
    }
  }, 120_000);
});
