import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonNumber } from '@flowline/graph';
import { ToolError, createToolRegistry, type InvokeContext, type ToolRegistry } from '../src/index';

async function failureOf(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!(error instanceof ToolError)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('http_fetch against a local server', () => {
  let server: Server;
  let base: string;
  let open: ToolRegistry;
  let guarded: ToolRegistry;
  let hangingRequest: (() => void) | null = null;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/ok/json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
      } else if (url === '/ok/exact') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":9007199254740993}');
      } else if (url === '/ok/text') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      } else if (url === '/ok/redirect-inside') {
        res.writeHead(302, { location: '/ok/json' }).end();
      } else if (url === '/ok/redirect-outside') {
        res.writeHead(302, { location: '/private/x' }).end();
      } else if (url === '/ok/loop') {
        res.writeHead(302, { location: '/ok/loop' }).end();
      } else if (url === '/ok/big') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(4096));
      } else if (url === '/ok/unavailable') {
        res.writeHead(503).end();
      } else if (url === '/ok/headers') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ idempotencyKey: req.headers['idempotency-key'] ?? null }));
      } else if (url === '/ok/hang') {
        hangingRequest = () => res.end();
      } else {
        res.writeHead(200).end('private');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    open = await createToolRegistry({ httpFetch: { allowPrivate: true, maxResponseBytes: 1024 } });
    guarded = await createToolRegistry();
  });

  afterAll(async () => {
    hangingRequest?.();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const ctx = (overrides: Partial<InvokeContext> = {}): InvokeContext => ({
    signal: new AbortController().signal,
    allowedUrls: [`${base}/ok/`],
    runId: 'run-1',
    nodeKey: 'charge',
    attempt: 1,
    invocationId: 'inv-1',
    input: { run: { input: null }, upstream: {}, input: null },
    ...overrides,
  });

  it('sends Idempotency-Key <runId>:<nodeKey> only when the node asks, the same on a retry', async () => {
    const url = `${base}/ok/headers`;
    const first = await open.invoke('http_fetch', { url, sendIdempotencyKey: true }, ctx());
    const retry = await open.invoke('http_fetch', { url, sendIdempotencyKey: true }, ctx({ attempt: 2, invocationId: 'inv-2' }));
    expect(first).toMatchObject({ json: { idempotencyKey: 'run-1:charge' } });
    expect(retry).toMatchObject({ json: { idempotencyKey: 'run-1:charge' } });
    expect(await open.invoke('http_fetch', { url }, ctx())).toMatchObject({ json: { idempotencyKey: null } });
    expect(await open.invoke('http_fetch', { url, sendIdempotencyKey: false }, ctx())).toMatchObject({ json: { idempotencyKey: null } });
  });

  it('fetches an allowed URL and parses a JSON body when private addresses are allowed', async () => {
    expect(await open.invoke('http_fetch', { url: `${base}/ok/json`, method: 'GET' }, ctx())).toEqual({
      url: `${base}/ok/json`,
      status: 200,
      contentType: 'application/json',
      body: '{"a":1}',
      json: { a: 1 },
    });
  });

  it('parses a JSON body with numbers a double cannot hold exactly', async () => {
    expect(await open.invoke('http_fetch', { url: `${base}/ok/exact` }, ctx())).toMatchObject({ json: { id: new JsonNumber('9007199254740993') } });
  });

  it('returns a 4xx answer as a result', async () => {
    expect(await open.invoke('http_fetch', { url: `${base}/ok/text` }, ctx())).toMatchObject({ status: 404, body: 'not here' });
  });

  it('fails retryably on a 5xx answer', async () => {
    const error = await failureOf(open.invoke('http_fetch', { url: `${base}/ok/unavailable` }, ctx()));
    expect(error.failureClass).toBe('NodeFailed');
  });

  it('refuses loopback when private addresses are not allowed, for IP literals and host names alike', async () => {
    expect((await failureOf(guarded.invoke('http_fetch', { url: `${base}/ok/json` }, ctx()))).message).toMatch(/private address/);
    const port = (server.address() as AddressInfo).port;
    const byName = `http://localhost:${port}/ok/`;
    const error = await failureOf(guarded.invoke('http_fetch', { url: `${byName}json` }, ctx({ allowedUrls: [byName] })));
    expect(error.failureClass).toBe('ValidationFailed');
    expect(error.message).toMatch(/private address/);
  });

  it('refuses an IPv4-mapped IPv6 literal of loopback when private addresses are not allowed', async () => {
    const port = (server.address() as AddressInfo).port;
    const mapped = `http://[::ffff:127.0.0.1]:${port}/ok/`;
    const error = await failureOf(guarded.invoke('http_fetch', { url: `${mapped}json` }, ctx({ allowedUrls: [mapped] })));
    expect(error.failureClass).toBe('ValidationFailed');
    expect(error.message).toMatch(/private address/);
  });

  it('follows a redirect that stays under allowedUrls', async () => {
    expect(await open.invoke('http_fetch', { url: `${base}/ok/redirect-inside` }, ctx())).toMatchObject({ url: `${base}/ok/json`, status: 200 });
  });

  it('refuses a redirect to a URL outside allowedUrls', async () => {
    const error = await failureOf(open.invoke('http_fetch', { url: `${base}/ok/redirect-outside` }, ctx()));
    expect(error.failureClass).toBe('ValidationFailed');
    expect(error.message).toMatch(/redirect leads outside/);
  });

  it('fails after too many redirects', async () => {
    expect((await failureOf(open.invoke('http_fetch', { url: `${base}/ok/loop` }, ctx()))).message).toMatch(/redirects/);
  });

  it('refuses URLs outside allowedUrls and an empty allowedUrls list', async () => {
    expect((await failureOf(open.invoke('http_fetch', { url: `${base}/private/x` }, ctx()))).failureClass).toBe('ValidationFailed');
    expect((await failureOf(open.invoke('http_fetch', { url: `${base}/ok/json` }, ctx({ allowedUrls: [] })))).failureClass).toBe('ValidationFailed');
  });

  it('refuses a method other than GET', async () => {
    expect((await failureOf(open.invoke('http_fetch', { url: `${base}/ok/json`, method: 'POST' }, ctx()))).failureClass).toBe('ValidationFailed');
  });

  it('fails when the body exceeds the response cap', async () => {
    expect((await failureOf(open.invoke('http_fetch', { url: `${base}/ok/big` }, ctx()))).message).toMatch(/exceeds 1024 bytes/);
  });

  it('ends with the abort reason when the invocation is aborted mid-request', async () => {
    const controller = new AbortController();
    const pending = failureOf(open.invoke('http_fetch', { url: `${base}/ok/hang` }, ctx({ signal: controller.signal })));
    await expect.poll(() => hangingRequest !== null, { timeout: 5_000 }).toBe(true);
    controller.abort(new ToolError('Timeout', 'deadline passed'));
    expect((await pending).failureClass).toBe('Timeout');
  });
});
