/**
 * `npm run build` output runs: each service's compiled `dist/main.js` boots under plain
 * `node` (no TypeScript loader) against real Postgres and Redis, imports only the compiled
 * libs, and stops with exit 0 on SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimShards } from '@flowline/db';
import { createTestDatabase, createTestRedis, spawnService, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const SERVICES = [
  { name: 'api', readyText: 'api listening' },
  { name: 'dispatcher', readyText: 'dispatcher started' },
  { name: 'worker-tool', readyText: 'worker-tool ready' },
  { name: 'worker-llm', readyText: 'worker-llm ready' },
] as const;

let db: TestDatabase;
let redis: TestRedis;

beforeAll(async () => {
  // turbo builds each service and the libs it depends on (`name...`; cached when unchanged)
  execFileSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only', ...SERVICES.map((s) => `--filter=@flowline/${s.name}...`)], {
    cwd: rootDir,
    stdio: 'pipe',
  });
  db = await createTestDatabase();
  redis = createTestRedis();
}, 600_000);

afterAll(async () => {
  await redis?.cleanup();
  await db?.drop();
});

describe('compiled services', () => {
  it('import the compiled libs, never TypeScript sources or a loader', () => {
    for (const s of SERVICES) {
      const meta = JSON.parse(readFileSync(join(rootDir, 'services', s.name, 'dist', 'build-meta.json'), 'utf8')) as { externals: string[] };
      const workspace = meta.externals.filter((e) => e.startsWith('@flowline/'));
      expect(workspace.length, s.name).toBeGreaterThan(0);
      for (const e of workspace) expect(e, s.name).toMatch(/\/dist$/);
      expect(meta.externals, s.name).not.toContain('tsx');
    }
  });

  it.each(SERVICES)('$name boots from dist/main.js under plain node and exits 0 on SIGTERM', async ({ name, readyText }) => {
    const p = await spawnService({
      cwd: join(rootDir, 'services', name),
      args: ['dist/main.js'],
      env: { DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, PORT: '0', DISPATCHER_ID: `compiled-${name}` },
      readyText,
      readyTimeoutMs: 60_000,
    });
    try {
      if (name === 'api') {
        const port = Number(/"port":(\d+)/.exec(p.output())?.[1]);
        // no dispatcher yet: not ready; a dispatcher's lease on a shard makes it ready
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
        await claimShards(db.pool, 'compiled-test-dispatcher', 1, 60_000);
        // the API caches its lease read for a second
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, { timeoutMs: 5_000, description: 'api /readyz 200 once a shard is held' });
      }
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited, p.output()).toBe(0);
    expect(p.output()).not.toMatch(/ERR_MODULE_NOT_FOUND|ERR_UNKNOWN_FILE_EXTENSION/);
  }, 120_000);
});
