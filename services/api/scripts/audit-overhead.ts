/**
 * A rough measure of what the audit log adds to a run start: N sequential starts through the
 * in-process app (`app.request`) against a fresh database and real Redis, wall time and CPU per
 * start. Not the bench: run it on this commit and on the one before the audit log to compare.
 *
 *   npx tsx services/api/scripts/audit-overhead.ts [starts=400] [rounds=3]
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { createTestDatabase, createTestRedis } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { createApp } from '../src/app';

const N = Number(process.argv[2] ?? 400);
const ROUNDS = Number(process.argv[3] ?? 3);
const db = await createTestDatabase();
const tr = createTestRedis();
const redis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
const tools = await createToolRegistry({ testTools: false });
const app = createApp({
  pool: db.pool,
  redis,
  apiKeys: new Map([['k', 'bench']]),
  limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 200, shardCount: 16, streamPollMs: 50, maxSteersPerNode: 5 },
  tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
  queuePrefix: tr.prefix,
  logger: pino({ level: 'silent' }),
});
const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
const graph = { nodes: [{ key: 'start', kind: 'Start' }, { key: 'end', kind: 'End', config: { outcome: 'done' } }], edges: [{ key: 'e1', from: 'start', to: 'end' }] };
const def = (await (await app.request('/v1/definitions', { method: 'POST', headers, body: JSON.stringify({ name: 'overhead', graph }) })).json()) as { id: string };
const start = async () => {
  const res = await app.request(`/v1/definitions/${def.id}/runs`, { method: 'POST', headers, body: '{}' });
  if (res.status !== 202) throw new Error(`start answered ${res.status}`);
  await res.arrayBuffer();
};
for (let i = 0; i < 50; i++) await start(); // warm-up: JIT, pool, prepared statements
for (let r = 0; r < ROUNDS; r++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await start();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  console.log(`round ${r + 1}: ${N} starts, ${(ms / N).toFixed(3)} ms/start wall, ${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms/start API CPU`);
}
redis.disconnect();
await tr.cleanup();
await db.drop();
process.exit(0);
