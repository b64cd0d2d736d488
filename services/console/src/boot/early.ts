/**
 * The console's first script does two reads before the app's code has even loaded: the
 * key's whoami and, on a linked run view, the run. Each goes out through the REST client
 * itself (no URL is built here), over a fetch that keeps the response; the app's client is
 * then given {@link EarlyReads.fetch}, which answers the same request (method, URL and
 * bearer) once from what was kept and passes every other request to the network. A read
 * nobody asks for is simply dropped.
 */
import { createRestClient } from '@flowline/client/rest';

/** The run a linked run view (`/console/run?runId=…`) shows, if that is where the app opened. */
export function linkedRunId(at: { pathname: string; search: string }): string | null {
  if (!at.pathname.replace(/\/+$/, '').endsWith('/run')) return null;
  const runId = new URLSearchParams(at.search).get('runId');
  return runId ? runId : null;
}

export interface EarlyReads {
  /** a fetch that answers each early read once, then goes to the network */
  fetch: typeof fetch;
  /** the early reads still unclaimed (tests) */
  pending(): number;
}

function requestKey(input: RequestInfo | URL, init: RequestInit | undefined): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const headers = new Headers(init?.headers);
  return `${(init?.method ?? 'GET').toUpperCase()} ${url} ${headers.get('authorization') ?? ''}`;
}

/** Starts the early reads for `apiKey` (null: no key) against `baseUrl`; none when `whoami` is false. */
export function startEarlyReads(o: { baseUrl: string; apiKey: string | null; runId: string | null; whoami?: boolean; fetch?: typeof fetch }): EarlyReads {
  const network = o.fetch ?? ((input, init) => fetch(input, init));
  const kept = new Map<string, Promise<Response>>();
  const keep: typeof fetch = (input, init) => {
    const res = network(input, init);
    kept.set(requestKey(input, init), res);
    // the early client reads a copy; the kept response is the app's to read
    return res.then((r) => r.clone());
  };
  const early = createRestClient({ baseUrl: o.baseUrl, ...(o.apiKey ? { apiKey: o.apiKey } : {}), fetch: keep });
  // no key against an API that checks keys: whoami would only be refused, and the run read too
  if (o.whoami === false) return { fetch: network, pending: () => kept.size };
  void early.whoami().catch(() => undefined);
  if (o.runId) void early.runs.get(o.runId).catch(() => undefined);
  return {
    fetch: (input, init) => {
      const key = requestKey(input, init);
      const res = kept.get(key);
      if (!res) return network(input, init);
      kept.delete(key);
      return res;
    },
    pending: () => kept.size,
  };
}
