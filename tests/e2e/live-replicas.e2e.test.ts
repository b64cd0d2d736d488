/**
 * The live channel across API replicas: stopping one replica (SIGTERM, as a deploy does)
 * closes only that replica's sockets — a console connected to another replica keeps its
 * connection. The replicas share one Redis through the Socket.IO adapter, so a shutdown that
 * broadcast its disconnect would reach every replica's sockets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import { LIVE_SOCKET_PATH } from '@flowline/queue';
import { freePort, startE2eCluster, waitFor, waitForApi, type E2eCluster } from '@flowline/testing';

describe('API replicas sharing the live channel', () => {
  let c: E2eCluster;
  let otherUrl: string;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 0 });
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

  it('keeps a socket on one replica connected when another replica is stopped', async () => {
    const socket: Socket = io(c.cluster.apiUrl, { path: LIVE_SOCKET_PATH, transports: ['websocket'], reconnection: false });
    const disconnects: string[] = [];
    socket.on('disconnect', (reason) => disconnects.push(reason));
    try {
      await waitFor(() => socket.connected, { timeoutMs: 10_000, description: 'socket connected to the first replica' });
      // a socket on the replica being stopped is closed by it (the replica drains its own)
      const onOther: Socket = io(otherUrl, { path: LIVE_SOCKET_PATH, transports: ['websocket'], reconnection: false });
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
