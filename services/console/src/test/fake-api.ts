/**
 * Component tests talk to the console's real `@flowline/client` over a fetch that answers
 * like the API would (contract shapes, the `{ error: { code, message } }` refusals): each
 * route is a handler keyed `"METHOD /path"` (path without the query).
 */
export type Handler = (req: { url: URL; body: unknown; headers: Headers }) => { status?: number; body?: unknown } | Promise<{ status?: number; body?: unknown }>;

export interface FakeApi {
  fetch: typeof fetch;
  /** every request, `METHOD /path?query` */
  calls: string[];
  /** the requests' bodies and headers, in order */
  sent: Array<{ route: string; body: unknown; headers: Headers }>;
  on(route: string, handler: Handler): void;
}

export const refuse = (status: number, code: string, message: string) => ({ status, body: { error: { code, message } } });

export function fakeApi(routes: Record<string, Handler> = {}): FakeApi {
  const table = new Map(Object.entries(routes));
  const calls: string[] = [];
  const sent: FakeApi['sent'] = [];
  const match = (method: string, path: string): Handler | undefined => {
    const exact = table.get(`${method} ${path}`);
    if (exact) return exact;
    for (const [k, h] of table) {
      const [m, p] = k.split(' ') as [string, string];
      if (m === method && new RegExp(`^${p.replace(/\*/g, '[^/]+')}$`).test(path)) return h;
    }
    return undefined;
  };
  const fetchFn: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const route = `${method} ${url.pathname}`;
    calls.push(`${route}${url.search}`);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const headers = new Headers(init?.headers);
    sent.push({ route, body, headers });
    const h = match(method, decodeURIComponent(url.pathname));
    const answer = h ? await h({ url, body, headers }) : refuse(404, 'NotFound', 'no such route');
    const status = answer.status ?? 200;
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch: fetchFn, calls, sent, on: (route, handler) => table.set(route, handler) };
}

/** A sessionStorage stand-in. */
export function memoryStorage(initial: Record<string, string> = {}) {
  const m = new Map(Object.entries(initial));
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
    map: m,
  };
}
