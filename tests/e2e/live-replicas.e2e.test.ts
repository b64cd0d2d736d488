/**
 * Two API replicas as two processes sharing one Postgres and one Redis:
 *
 * - a managed key revoked through one replica is refused by both within 5 s, though each had
 *   it cached (the cache trusts an entry for API_KEY_CACHE_TTL_MS, set to ten minutes here:
 *   only the invalidation over Redis can end it in time);
 * - the live channel: stopping one replica (SIGTERM, as a deploy does) closes only that
 *   replica's sockets — a console connected to another replica keeps its connection. The
 *   replicas share one Redis through the Socket.IO adapter, so a shutdown that broadcast its
 *   disconnect would reach every replica's sockets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import { createClient, isApiRequestError } from '@flowline/client';
import { LIVE_SOCKET_PATH } from '@flowline/queue';
import { freePort, startE2eCluster, waitFor, waitForApi, type E2eCluster } from '@flowline/testing';

const ADMIN_KEY = 'k-replicas-admin';

describe('API replicas sharing keys and the live channel', () => {
  let c: E2eCluster;
  let otherUrl: string;

  beforeAll(async () => {
    c = await startE2eCluster({
      dispatchers: 1,
      toolWorkers: 0,
      env: { API_KEYS: `acme:${ADMIN_KEY}`, API_KEY_PEPPER: 'replicas-test-pepper-0123456789abcdef', API_KEY_CACHE_TTL_MS: '600000' },
    });
    const port = await freePort();
    c.cluster.launch({ label: 'api-2', service: 'api', env: { PORT: String(port) } });
    otherUrl = `http://127.0.0.1:${port}`;
    await waitForApi(otherUrl, 45_000);
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('refuses a managed key revoked through one replica on both replicas within 5 s, though both had it cached', async () => {
    const admin = createClient({ baseUrl: c.cluster.apiUrl, apiKey: ADMIN_KEY });
    const minted = await admin.apiKeys.create({ name: 'revoked across replicas', scopes: ['read'] });
    const on = [c.cluster.apiUrl, otherUrl].map((baseUrl) => createClient({ baseUrl, apiKey: minted.secret }));
    try {
      // each replica resolves the key once, and caches it
      for (const client of on) expect((await client.whoami()).keyId).toBe(minted.id);
      const revokedAt = Date.now();
      await admin.apiKeys.revoke(minted.id);
      const refusedAfter = await Promise.all(
        on.map(async (client) => {
          for (;;) {
            const refused = await client.whoami().then(
              () => false,
              (err: unknown) => isApiRequestError(err, 'Unauthorized'),
            );
            if (refused) return Date.now() - revokedAt;
            if (Date.now() - revokedAt > 10_000) return Infinity;
            await new Promise((r) => setTimeout(r, 50));
          }
        }),
      );
      expect(refusedAfter.every((ms) => ms <= 5_000), `refused after ${refusedAfter.join(' / ')} ms`).toBe(true);
    } finally {
      for (const client of [admin, ...on]) client.close();
    }
  }, 60_000);

  it('keeps a socket on one replica connected when another replica is stopped', async () => {
    const socket: Socket = io(c.cluster.apiUrl, { path: LIVE_SOCKET_PATH, transports: ['websocket'], reconnection: false, auth: { token: ADMIN_KEY } });
    const disconnects: string[] = [];
    socket.on('disconnect', (reason) => disconnects.push(reason));
    try {
      await waitFor(() => socket.connected, { timeoutMs: 10_000, description: 'socket connected to the first replica' });
      // a socket on the replica being stopped is closed by it (the replica drains its own)
      const onOther: Socket = io(otherUrl, { path: LIVE_SOCKET_PATH, transports: ['websocket'], reconnection: false, auth: { token: ADMIN_KEY } });
      await waitFor(() => onOther.connected, { timeoutMs: 10_000, description: 'socket connected to the second replica' });
      const otherGone = new Promise<string>((resolve) => onOther.once('disconnect', resolve));
      await c.cluster.kill('api-2', 'SIGTERM');
      expect(await otherGone).toMatch(/io server disconnect|transport close/);
      // the adapter's messages of the stopped replica had time to arrive
      await new Promise((r) => setTimeout(r, 1000));
      expect(disconnects).toEqual([]);
      expect(socket.connected).toBe(true);
    } finally {
      socket.close();
    }
  }, 60_000);
});
