/**
 * Retention through a real dispatcher process (issue #17, "retention prunes exactly the
 * expired runs"): terminal runs of three tenants with different retentions, backdated by
 * SQL, beside live runs and runs tied to a live parent; the dispatcher's pruner deletes
 * exactly the expired ones with every row naming them, in batches of 2, counts them on
 * /metrics and logs one line per pass.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  createTestRedis,
  insertRunRows,
  runRowCounts,
  spawnService,
  waitFor,
  type RunRowsSpec,
  type ServiceProcess,
  type TestDatabase,
  type TestRedis,
} from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../../..', import.meta.url));
const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);

let db: TestDatabase;
let redis: TestRedis;
let proc: ServiceProcess | undefined;
beforeAll(async () => {
  db = await createTestDatabase();
  redis = createTestRedis();
});
afterAll(async () => {
  if (proc && proc.child.exitCode === null) proc.child.kill('SIGKILL');
  await redis?.cleanup();
  await db?.drop();
});

interface PassLine {
  msg: string;
  runs: number;
  events: number;
  nodeRuns: number;
  intents: number;
  messages: number;
  conversations: number;
  tenants: number;
  batches: number;
  byTenant: Record<string, number>;
}

function passLines(p: ServiceProcess): PassLine[] {
  return p
    .output()
    .split('\n')
    .filter((l) => l.includes('"msg":"retention: pass done"'))
    .map((l) => JSON.parse(l) as PassLine);
}

function opsPortOf(p: ServiceProcess): number {
  const m = /"port":(\d+),"msg":"ops port listening/.exec(p.output());
  if (!m) throw new Error(`no ops port line in: ${p.output()}`);
  return Number(m[1]);
}

function prunedMetric(text: string, tenant: string): number | null {
  const m = new RegExp(`^flowline_runs_pruned_total\\{tenant="${tenant}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

const GONE = { runs: 0, events: 0, node_runs: 0, intents: 0, messages: 0, agent_steps: 0 };
const KEPT = { runs: 1, events: 2, node_runs: 2, intents: 1, messages: 1, agent_steps: 1 };

describe('retention in the dispatcher', () => {
  it('prunes exactly the expired runs of each tenant, with every row naming them, and nothing else', async () => {
    const run = (spec: RunRowsSpec) => insertRunRows(db.pool, spec);
    // acme: RETENTION_DAYS=7 (unlisted); beta: 30; gamma: 0 = forever
    const liveParent = await run({ tenantId: 'acme', status: 'Running', finishedAt: null });
    const expired = {
      acme: [
        await run({ tenantId: 'acme', status: 'Completed', finishedAt: ago(8) }),
        await run({ tenantId: 'acme', status: 'Failed', finishedAt: ago(30) }),
        await run({ tenantId: 'acme', status: 'Cancelled', finishedAt: ago(400) }),
        await run({ tenantId: 'acme', status: 'Completed', finishedAt: ago(10) }),
        await run({ tenantId: 'acme', status: 'Completed', finishedAt: ago(12), conversationId: 'old-chat' }),
      ],
      beta: [await run({ tenantId: 'beta', status: 'Completed', finishedAt: ago(31) }), await run({ tenantId: 'beta', status: 'Failed', finishedAt: ago(100) })],
    };
    const kept = [
      liveParent,
      await run({ tenantId: 'acme', status: 'Completed', finishedAt: ago(6) }),
      await run({ tenantId: 'acme', status: 'Failed', finishedAt: ago(1), conversationId: 'new-chat' }),
      await run({ tenantId: 'acme', status: 'Pending', finishedAt: null }),
      await run({ tenantId: 'acme', status: 'WaitingForApproval', finishedAt: null }),
      // a finished child of a live parent: the parent's node still names it
      await run({ tenantId: 'acme', status: 'Completed', finishedAt: ago(50), parentRunId: liveParent }),
      await run({ tenantId: 'beta', status: 'Completed', finishedAt: ago(8) }),
      await run({ tenantId: 'beta', status: 'Cancelled', finishedAt: ago(29) }),
      await run({ tenantId: 'gamma', status: 'Completed', finishedAt: ago(1000) }),
    ];
    const allExpired = [...expired.acme, ...expired.beta];

    proc = await spawnService({
      cwd: join(rootDir, 'services', 'dispatcher'),
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.prefix,
        DISPATCHER_ID: 'retention-test',
        OPS_PORT: '0',
        RETENTION_DAYS: '7',
        TENANT_RETENTION_DAYS: 'beta=30, gamma=0',
        RETENTION_BATCH_SIZE: '2',
        RETENTION_BATCH_PAUSE_MS: '0',
        RETENTION_INTERVAL_MS: '500',
      },
      readyText: '"msg":"retention: pass done"',
      readyTimeoutMs: 60_000,
    });
    const p = proc;

    const first = passLines(p)[0]!;
    expect(first).toMatchObject({
      runs: 7,
      events: 14,
      nodeRuns: 14,
      intents: 7,
      messages: 7,
      conversations: 1,
      tenants: 2,
      byTenant: { acme: 5, beta: 2 },
    });
    // batches of 2: acme 2+2+1, beta 2+0
    expect(first.batches).toBe(5);

    const counts = await runRowCounts(db.pool, [...allExpired, ...kept]);
    for (const id of allExpired) expect({ id, ...counts.get(id) }).toEqual({ id, ...GONE });
    for (const id of kept) expect({ id, ...counts.get(id) }).toEqual({ id, ...KEPT });
    // nothing else in the store went: only the kept runs' rows are left in every table
    const totals = await db.pool.query<{ runs: number; events: number; node_runs: number; intents: number; messages: number }>(
      `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM events)::int AS events,
              (SELECT count(*) FROM node_runs)::int AS node_runs, (SELECT count(*) FROM intents)::int AS intents,
              (SELECT count(*) FROM messages)::int AS messages`,
    );
    expect(totals.rows[0]).toEqual({ runs: kept.length, events: 2 * kept.length, node_runs: 2 * kept.length, intents: kept.length, messages: kept.length });
    const chats = await db.pool.query<{ id: string; bound: boolean }>(`SELECT id, bound_run_id IS NOT NULL AS bound FROM conversations ORDER BY id`);
    expect(chats.rows).toEqual([
      { id: 'new-chat', bound: true },
      { id: 'old-chat', bound: false },
    ]);

    const port = opsPortOf(p);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(prunedMetric(metrics, 'acme')).toBe(5);
    expect(prunedMetric(metrics, 'beta')).toBe(2);
    expect(prunedMetric(metrics, 'gamma')).toBeNull();

    // a later pass takes a run that expired since, and only it
    const late = await run({ tenantId: 'beta', status: 'Failed', finishedAt: ago(31) });
    await waitFor(async () => (await runRowCounts(db.pool, [late])).get(late)!.runs === 0, {
      timeoutMs: 20_000,
      intervalMs: 100,
      description: 'the late expired run pruned by a later pass',
    });
    expect((await runRowCounts(db.pool, [late])).get(late)).toEqual(GONE);
    const after = await runRowCounts(db.pool, kept);
    for (const id of kept) expect({ id, ...after.get(id) }).toEqual({ id, ...KEPT });
    expect(passLines(p).reduce((n, l) => n + l.runs, 0)).toBe(8);

    p.child.kill('SIGTERM');
    expect(await p.exited, p.output()).toBe(0);
  }, 120_000);

  it('stops at boot naming TENANT_RETENTION_DAYS when it is malformed', async () => {
    const p = await spawnService({
      cwd: join(rootDir, 'services', 'dispatcher'),
      env: { DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, TENANT_RETENTION_DAYS: 'acme:7' },
      readyText: null,
    });
    expect(await p.exited).not.toBe(0);
    expect(p.output()).toContain('TENANT_RETENTION_DAYS');
    expect(p.output()).toContain("'acme:7' is not tenant=days");
  }, 60_000);
});
