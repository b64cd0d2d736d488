/**
 * `npm run bench` measures the compiled services: the bench's cluster (tests/bench/lib/flowline)
 * builds them and runs each as plain `node services/<svc>/dist/main.js`, never the sources
 * under the TypeScript loader.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';
import { startBenchCluster, type BenchCluster } from '../bench/lib/flowline';

let db: TestDatabase;
let redis: TestRedis;
let c: BenchCluster | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = createTestRedis();
}, 60_000);

afterAll(async () => {
  await c?.close();
  await redis?.cleanup();
  await db?.drop();
});

it('runs every process of the bench cluster from dist/main.js under plain node, and a run completes on it', async () => {
  c = await startBenchCluster(db.url, redis.url, 1);
  const args = [...c.cluster.processes.values()].map((p) => ({ service: p.spec.service, argv: p.proc.spawnargs.slice(1) }));
  expect(args.map((a) => a.service).sort()).toEqual(['api', 'dispatcher', 'worker-tool']);
  for (const a of args) {
    expect(a.argv.at(-1), a.service).toBe(`services/${a.service}/dist/main.js`);
    expect(a.argv, a.service).not.toContain('tsx');
  }
  const id = await c.api.createDefinition('bench-compiled', {
    schemaVersion: 1,
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'echo', kind: 'Tool', config: { toolName: 'echo', arguments: { ok: true } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'echo' },
      { key: 'e2', from: 'echo', to: 'end' },
    ],
  });
  const runId = await c.api.startRun(id, {});
  await waitFor(async () => {
    const r = await db.pool.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
    return r.rows[0]?.status === 'Completed';
  }, { timeoutMs: 30_000, description: 'the run completed on the compiled cluster' });
}, 600_000);
