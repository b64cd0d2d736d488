/**
 * The REST half of the typed client (CONTRACT §5, §8): one method per route, JSON in and
 * out, bearer auth, and a typed {@link ApiRequestError} for every non-2xx answer.
 */
import type { LiveEvent } from '@flowline/queue';

/** Options of {@link createRestClient}. */
export interface RestClientOptions {
  /** e.g. `http://127.0.0.1:3000` (no trailing `/v1`) */
  baseUrl: string;
  /** bearer key; omit for a single-tenant server without auth */
  apiKey?: string;
  /** fetch implementation (defaults to the global one) */
  fetch?: typeof fetch;
}

/** A non-2xx answer: HTTP status plus the contract's `{ error: { code, message, details? } }`. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/** A list page (`GET` list routes). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `GET /v1/runs/{id}/events`. */
export interface EventPage {
  events: LiveEvent[];
  limit: number;
  truncated: boolean;
}

// Resource shapes are the contract's (§8); loosely typed where the client does not rely on members.
/* eslint-disable @typescript-eslint/no-explicit-any -- documents are JSON of the contract's shapes */
export type Definition = { id: string; name: string; version: number; graph?: unknown; [k: string]: any };
export type RunSummary = { id: string; status: string; [k: string]: any };
export type RunDetail = { run: RunSummary; nodeRuns: Array<{ nodeKey: string; status: string; [k: string]: any }>; output: unknown; graph: unknown };
/* eslint-enable @typescript-eslint/no-explicit-any */

type Query = Record<string, string | number | undefined>;

/** Creates the REST client. */
export function createRestClient(o: RestClientOptions) {
  const base = o.baseUrl.replace(/\/+$/, '');
  const doFetch = o.fetch ?? fetch;

  async function call<T>(method: string, path: string, body?: unknown, query?: Query, headers?: Record<string, string>): Promise<T> {
    const qs = query
      ? Object.entries(query)
          .filter((e): e is [string, string | number] => e[1] !== undefined)
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
          .join('&')
      : '';
    const h: Record<string, string> = { ...headers };
    if (o.apiKey) h.authorization = `Bearer ${o.apiKey}`;
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await doFetch(`${base}${path}${qs ? `?${qs}` : ''}`, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!res.ok) {
      const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
      throw new ApiRequestError(res.status, err?.code ?? `Http${res.status}`, err?.message ?? res.statusText, err?.details, parsed);
    }
    return parsed as T;
  }
  const id = encodeURIComponent;

  return {
    /** raw call for routes without a method here */
    call,
    definitions: {
      create: (b: { name: string; description?: string; graph: unknown }) => call<Definition>('POST', '/v1/definitions', b),
      list: (q: { limit?: number; cursor?: string } = {}) => call<Page<Definition>>('GET', '/v1/definitions', undefined, q),
      get: (defId: string) => call<Definition>('GET', `/v1/definitions/${id(defId)}`),
      update: (defId: string, b: { name?: string; description?: string; graph?: unknown; version: number }) =>
        call<Definition>('PUT', `/v1/definitions/${id(defId)}`, b),
      delete: (defId: string) => call<null>('DELETE', `/v1/definitions/${id(defId)}`),
      duplicate: (defId: string) => call<Definition>('POST', `/v1/definitions/${id(defId)}/duplicate`),
      validate: (graph: unknown) =>
        call<{ valid: boolean; errors: unknown[]; warnings: unknown[] }>('POST', '/v1/definitions/validate', { graph }),
    },
    runs: {
      start: (defId: string, b: { requestId?: string; input?: unknown; conversationId?: string } = {}) =>
        call<{ runId: string }>('POST', `/v1/definitions/${id(defId)}/runs`, b),
      list: (q: { status?: string; definitionId?: string; limit?: number; cursor?: string } = {}) =>
        call<Page<RunSummary>>('GET', '/v1/runs', undefined, q),
      get: (runId: string) => call<RunDetail>('GET', `/v1/runs/${id(runId)}`),
      node: (runId: string, nodeKey: string) => call<Record<string, unknown>>('GET', `/v1/runs/${id(runId)}/nodes/${id(nodeKey)}`),
      events: (runId: string, q: { afterSeq?: number; limit?: number } = {}) =>
        call<EventPage>('GET', `/v1/runs/${id(runId)}/events`, undefined, q),
      cancel: (runId: string) => call<unknown>('POST', `/v1/runs/${id(runId)}/cancel`),
      decide: (runId: string, nodeKey: string, b: { operationId: string; decision: string; comment?: string; payload?: unknown }) =>
        call<unknown>('POST', `/v1/runs/${id(runId)}/nodes/${id(nodeKey)}/decide`, b),
      pause: (runId: string) => call<unknown>('POST', `/v1/runs/${id(runId)}/pause`),
      resume: (runId: string) => call<unknown>('POST', `/v1/runs/${id(runId)}/resume`),
    },
  };
}

/** The REST client's type. */
export type RestClient = ReturnType<typeof createRestClient>;
