import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context';
import { errorResponse } from './errors';
import { registerConsole } from './console';

function appServing(dir: string, o?: { authRequired: boolean }) {
  const app = new OpenAPIHono<AppEnv>();
  app.onError((err, c) => {
    const { status, body } = errorResponse(err);
    return c.json(body, status as 500);
  });
  registerConsole(app, dir, o);
  return app;
}

describe('the console at /console', () => {
  let dist: string;
  const html = '<!doctype html><title>Flowline</title><div id="root"></div>';
  const js = 'console.log("app")';

  beforeAll(() => {
    dist = mkdtempSync(join(tmpdir(), 'console-dist-'));
    mkdirSync(join(dist, 'assets'));
    writeFileSync(join(dist, 'index.html'), html);
    writeFileSync(join(dist, 'assets', 'index-abc123.js'), js);
    writeFileSync(join(dist, 'assets', 'index-abc123.js.br'), brotliCompressSync(js));
    writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));

  it('redirects /console to /console/ and answers the app there, never cached, with a same-origin content policy', async () => {
    const app = appServing(dist);
    const bare = await app.request('/console');
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');
    const res = await app.request('/console/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await res.text()).toBe(html);
  });

  it('answers the app for any view path, so a linked or reloaded view opens', async () => {
    const res = await appServing(dist).request('/console/runs?runId=abc&nodeKey=review&tab=events');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(html);
  });

  it('serves hashed assets immutable, brotli-compressed when the browser accepts it', async () => {
    const app = appServing(dist);
    const plain = await app.request('/console/assets/index-abc123.js');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await plain.text()).toBe(js);
    const br = await app.request('/console/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('content-type')).toMatch(/javascript/);
    const other = await app.request('/console/favicon.svg');
    expect(other.headers.get('content-type')).toMatch(/svg/);
  });

  it("says in the app's page whether the API checks keys, on every view path, so a console with no key asks for one without a refused whoami", async () => {
    for (const authRequired of [true, false]) {
      const app = appServing(dist, { authRequired });
      for (const path of ['/console/', '/console/index.html', '/console/runs?runId=abc']) {
        const res = await app.request(path);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/text\/html/);
        expect(res.headers.get('cache-control')).toBe('no-cache');
        const meta = `<meta name="flowline-auth" content="${authRequired ? 'required' : 'none'}" />`;
        expect(await res.text()).toBe(`${meta}${html}`);
      }
      expect(await (await app.request('/console/assets/index-abc123.js')).text()).toBe(js);
    }
  });

  it('answers a missing asset 404 in the error shape instead of the app', async () => {
    const res = await appServing(dist).request('/console/assets/gone-000.js');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NotFound', message: 'console asset not found' } });
  });

  it('never serves a file outside its directory', async () => {
    const res = await appServing(join(dist, 'assets')).request('/console/%2e%2e/index.html');
    expect(res.status).not.toBe(500);
    expect(await res.text()).not.toBe(html);
  });

  it('answers 503 ConsoleNotBuilt, saying how to build it, when the assets are missing', async () => {
    const res = await appServing(join(dist, 'nothing-here')).request('/console/');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('ConsoleNotBuilt');
    expect(body.error.message).toContain('npm run build -w @flowline/console');
  });
});
