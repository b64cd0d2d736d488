/**
 * The live channel through a deploy, in real headless Chromium: the console reaches the API
 * through a small TCP proxy (a load balancer's stand-in) in front of two API replicas. The
 * proxy is re-pointed to the second replica and the first one is stopped (SIGTERM), which
 * closes its sockets: the console reconnects to the second replica within 5 s, the header says
 * Live again and the open run view is followed live again (re-subscribed from its watermark),
 * and a change to the run after the switch shows in the view.
 */
import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createClient } from '@flowline/client';
import { freePort, waitForApi } from '@flowline/testing';
import { KEYS, closeAfterFile, openConsolePage, screenshot, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

const graph = {
  signals: { go: { schema: { type: 'object' } } },
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'hold', kind: 'Wait', config: { any: [{ signal: 'go' }] } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'hold' },
    { key: 'e2', from: 'hold', to: 'end' },
  ],
};

/** A TCP proxy to `target.port`; re-pointing it sends new connections elsewhere, open ones stay. */
async function startProxy(target: { port: number }): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the live channel through a deploy', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let page: Page;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const target = { port: 0 };
  let secondPort: number;

  beforeAll(async () => {
    c = await startConsoleCluster();
    secondPort = await freePort();
    c.e2e.cluster.launch({ label: 'api-2', service: 'api', env: { PORT: String(secondPort) } });
    await waitForApi(`http://127.0.0.1:${secondPort}`, 60_000);
    target.port = Number(new URL(c.baseUrl).port);
    proxy = await startProxy(target);
    ({ browser, page } = await openConsolePage());
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));

  it('reconnects to the other replica within 5 s when its own replica stops, and follows the run live again', async () => {
    const base = `http://127.0.0.1:${proxy.port}`;
    const defId = (await c.admin.definitions.create({ name: 'live-through-deploy', graph })).id;
    const { runId } = await c.admin.runs.start(defId, { input: {} });
    await signIn(page, base, KEYS.admin);
    await page.goto(`${base}/console/run?runId=${runId}`);
    const indicator = page.locator('.live-indicator');
    await expect.poll(() => indicator.textContent(), { timeout: 15_000 }).toBe('Live');
    await expect.poll(() => page.locator('[data-live-mode]').getAttribute('data-live-mode'), { timeout: 15_000 }).toBe('live');

    // the load balancer sends new connections to the second replica; then the first one stops
    target.port = secondPort;
    const stopped = Date.now();
    await c.e2e.cluster.kill('api', 'SIGTERM');
    await expect.poll(() => indicator.textContent(), { timeout: 5_000 - (Date.now() - stopped), interval: 50 }).toBe('Live');
    await expect.poll(() => page.locator('[data-live-mode]').getAttribute('data-live-mode'), { timeout: 5_000 }).toBe('live');
    await screenshot(page, 'live-reconnected');

    // the view follows the run through the second replica
    const second = createClient({ baseUrl: `http://127.0.0.1:${secondPort}`, apiKey: KEYS.admin });
    await second.runs.signal(runId, { channel: 'go', payload: {}, requestId: randomUUID() });
    second.close();
    await expect.poll(() => page.locator('h1.run-title').textContent(), { timeout: 10_000 }).toContain('Completed');
    await proxy.close();
  }, 90_000);
});
