import { randomUUID } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, waitFor, type TestDatabase } from '@flowline/testing';
import { CHAOS_SCHEMA_SQL, chaosEffectTool, endEffectsPool } from './effects-tool';

/**
 * A TCP proxy in front of Postgres that can reset every client connection (a TCP RST, as a
 * server going away mid-restart can leave them): the pg client sees a socket error, not an
 * orderly termination message.
 */
async function resettingProxy(target: URL): Promise<{ url: string; resetAll(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(downstream);
    downstream.on('close', () => sockets.delete(downstream));
    downstream.on('error', () => upstream.destroy());
    upstream.on('error', () => downstream.destroy());
    downstream.pipe(upstream).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    resetAll: () => sockets.forEach((s) => s.resetAndDestroy()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const ctx = () => ({
  signal: new AbortController().signal, allowedUrls: [], filesRoot: null, runId: 'r', nodeKey: 'n', input: { run: { input: null }, upstream: {}, input: null }, attempt: 1, invocationId: randomUUID(), idempotencyKey: 'r:n',
});

describe('the chaos effect tool', () => {
  let db: TestDatabase;
  let proxy: Awaited<ReturnType<typeof resettingProxy>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(CHAOS_SCHEMA_SQL);
    proxy = await resettingProxy(new URL(db.url));
    process.env.CHAOS_EFFECTS_URL = proxy.url;
  });
  afterAll(async () => {
    await endEffectsPool();
    await proxy?.close();
    await db?.drop();
  });

  it('fails its call, without an unhandled error event, when the connection it holds is reset mid-call', async () => {
    const leaked: unknown[] = [];
    const record = (err: unknown) => void leaked.push(err);
    process.on('uncaughtException', record);
    const locker = await db.pool.connect();
    try {
      // the call's insert into chaos.effects waits behind this lock, holding its client
      await locker.query('begin');
      await locker.query('lock table chaos.effects in access exclusive mode');
      const call = Promise.resolve(chaosEffectTool.run({ tag: 't', node: 'n' }, ctx()));
      const outcome = call.then(
        () => 'succeeded',
        () => 'failed',
      );
      await waitFor(
        async () => {
          const r = await db.pool.query(
            `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
          );
          return r.rowCount === 1;
        },
        { timeoutMs: 10_000, description: 'the tool waits on the lock' },
      );
      proxy.resetAll();
      expect(await outcome).toBe('failed');
      await locker.query('rollback');
      // the broken client was discarded: the next call records its effect
      expect(await chaosEffectTool.run({ tag: 't', node: 'n' }, ctx())).toEqual({ recorded: true, attempt: 1 });
      expect(leaked).toEqual([]);
    } finally {
      locker.release();
      process.off('uncaughtException', record);
    }
  });
});
