/**
 * The first script's early reads: whoami and a linked run go out at once through the REST
 * client; the app's client gets each answer once for the same request (method, URL, bearer),
 * and everything else, a repeat included, goes to the network.
 */
import { describe, expect, it } from 'vitest';
import { createRestClient } from '@flowline/client/rest';
import { linkedRunId, startEarlyReads } from './early';

function network() {
  const calls: Array<{ url: string; auth: string | null; method: string }> = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push({ url, auth: new Headers(init?.headers).get('authorization'), method: init?.method ?? 'GET' });
    return new Response(JSON.stringify({ n: calls.length, url }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { calls, fetch };
}

describe('linkedRunId', () => {
  it('reads the run of a run view link only', () => {
    expect(linkedRunId({ pathname: '/console/run', search: '?runId=r-1&nodeKey=a' })).toBe('r-1');
    expect(linkedRunId({ pathname: '/console/run/', search: '?runId=r-1' })).toBe('r-1');
    expect(linkedRunId({ pathname: '/console/run', search: '' })).toBeNull();
    expect(linkedRunId({ pathname: '/console/runs', search: '?runId=r-1' })).toBeNull();
  });
});

describe('startEarlyReads', () => {
  it('sends whoami and the linked run at once and answers each once to the same request', async () => {
    const net = network();
    const early = startEarlyReads({ baseUrl: 'http://h', apiKey: 'k1', runId: 'r 1', fetch: net.fetch });
    expect(net.calls.map((c) => c.url)).toEqual(['http://h/v1/whoami', 'http://h/v1/runs/r%201']);
    expect(net.calls.every((c) => c.auth === 'Bearer k1')).toBe(true);

    const app = createRestClient({ baseUrl: 'http://h', apiKey: 'k1', fetch: early.fetch });
    const [me, run] = await Promise.all([app.whoami(), app.runs.get('r 1')]);
    expect(me).toEqual({ n: 1, url: 'http://h/v1/whoami' });
    expect(run).toEqual({ n: 2, url: 'http://h/v1/runs/r%201' });
    expect(net.calls).toHaveLength(2);
    expect(early.pending()).toBe(0);

    // a second read of the same run is a new request
    expect(await app.runs.get('r 1')).toEqual({ n: 3, url: 'http://h/v1/runs/r%201' });
  });

  it('never answers another key’s request or another route from an early read', async () => {
    const net = network();
    const early = startEarlyReads({ baseUrl: 'http://h', apiKey: 'k1', runId: null, fetch: net.fetch });
    expect(net.calls).toHaveLength(1);
    const other = createRestClient({ baseUrl: 'http://h', apiKey: 'k2', fetch: early.fetch });
    expect(await other.whoami()).toEqual({ n: 2, url: 'http://h/v1/whoami' });
    expect(net.calls[1]!.auth).toBe('Bearer k2');
    expect(early.pending()).toBe(1);
    const same = createRestClient({ baseUrl: 'http://h', apiKey: 'k1', fetch: early.fetch });
    expect(await same.runs.list()).toMatchObject({ n: 3 });
    expect(await same.whoami()).toEqual({ n: 1, url: 'http://h/v1/whoami' });
  });

  it('reads without a key when none is stored', () => {
    const net = network();
    startEarlyReads({ baseUrl: 'http://h', apiKey: null, runId: null, fetch: net.fetch });
    expect(net.calls).toEqual([{ url: 'http://h/v1/whoami', auth: null, method: 'GET' }]);
  });

  it('reads nothing when told the API checks keys and there is none (whoami would only be refused)', async () => {
    const net = network();
    const early = startEarlyReads({ baseUrl: 'http://h', apiKey: null, runId: 'r1', whoami: false, fetch: net.fetch });
    expect(net.calls).toEqual([]);
    expect(early.pending()).toBe(0);
    const app = createRestClient({ baseUrl: 'http://h', apiKey: 'k1', fetch: early.fetch });
    expect(await app.whoami()).toEqual({ n: 1, url: 'http://h/v1/whoami' });
  });
});
