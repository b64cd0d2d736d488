/**
 * The REST half of the typed client (CONTRACT §5, §8): one method per route, JSON in and
 * out, bearer auth, and a typed {@link ApiRequestError} for every non-2xx answer. `send`
 * is the raw request for callers that assert refusals themselves (it never throws on a
 * status).
 */
import type { LiveEvent, RunChangedPing } from '@flowline/queue/protocol';
import type {
  ApiKey,
  ApiKeyCreate,
  ApiKeyWithSecret,
  Accepted,
  RescheduleBody,
  RunRescheduled,
  Schedule,
  ScheduleBackfill,
  ScheduleBody,
  ScheduleSlot,
  ScheduleSlotView,
  Breakpoints,
  ConversationMessage,
  Definition,
  DefinitionSummary,
  DefinitionVersion,
  DefinitionVersionSummary,
  EdgeOverride,
  GraphDescription,
  GraphRendering,
  GraphValidation,
  Health,
  MessageAccepted,
  RunResult,
  ConversationRun,
  Named,
  NodeInputOverride,
  NodeRunDetail,
  RunDetail,
  RunStatus,
  RunSummary,
  SendMessageBody,
  StoredFile,
  McpServer,
  McpServerBody,
  McpToolListing,
  SavedAgent,
  SavedAgentBody,
  SavedAgentVersionSummary,
  StartRunBody,
  StepAccepted,
  StepBody,
  ToolCatalogEntry,
  DecideAccepted,
  DecideBody,
  SignalAccepted,
  Waitpoint,
  WaitpointCallbackAnswer,
  WaitpointCompleted,
  InboundEvent,
  EventsAccepted,
  EventDetail,
  EventListItem,
  EventListQuery,
  Webhook,
  WebhookBody,
  WebhookDelivery,
  EventMatch,
  SignalBody,
  SteerBody,
  Whoami,
  AuthConfig,
  LaneInfo,
  AgentStepRead,
  RunControls,
  RunBlockers,
  ForkRunBody,
  BulkActionBody,
  BulkJob,
  BulkJobRun,
  RunSearchQuery,
  RunForked,
  MigrateRunBody,
  DefinitionDiff,
  DefinitionAlias,
  PutAliasBody,
  MigrationPlan,
  ActOptions,
  Conversation,
  AuditQuery,
  AuditRecord,
  AuditVerification,
} from './types';

/** Options of {@link createRestClient}. */
export interface RestClientOptions {
  /** e.g. `http://127.0.0.1:3000` (no trailing `/v1`) */
  baseUrl: string;
  /** bearer key; omit for a single-tenant server without auth */
  apiKey?: string;
  /** fetch implementation (defaults to the global one) */
  fetch?: typeof fetch;
  /**
   * Names the calling application in `x-flowline-client` (the console sends `console`): an
   * approval decision records the path it came through from it.
   */
  clientName?: string;
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

/** True when `err` is an {@link ApiRequestError}, with this `code` when one is given. */
export function isApiRequestError(err: unknown, code?: string): err is ApiRequestError {
  return err instanceof ApiRequestError && (code === undefined || err.code === code);
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

/** `GET /v1/runs/{id}/state`: the run state as of event `seq`. */
export interface RunStateAt {
  state: Record<string, unknown>;
  seq: number;
}

/** What {@link RestClient.send} answers: the status, the parsed body (text when not JSON) and the headers. */
export interface RawResponse {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON (or text) answer; callers assert it
  body: any;
  headers: Headers;
}

/** Options of a raw request. */
export interface SendOptions {
  body?: unknown;
  query?: Query;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Options of `runs.stream` (SSE). */
export interface StreamOptions {
  /** resume after this seq (sent as `Last-Event-ID`) */
  lastEventId?: number;
  /** resume after this seq (sent as `?afterSeq`; `lastEventId` wins on the server) */
  afterSeq?: number;
  signal?: AbortSignal;
}

type Query = Record<string, string | number | readonly string[] | undefined>;

/** A run search as query parameters: lists repeated, a metadata object as `key:value` pairs. */
function searchQuery(q: RunSearchQuery & { limit?: number; cursor?: string }): Query {
  const { metadata, status, ...rest } = q;
  const out: Query = { ...rest };
  if (status !== undefined) out.status = Array.isArray(status) ? status.join(',') : (status as string);
  if (metadata !== undefined) out.metadata = Array.isArray(metadata) ? metadata : Object.entries(metadata).map(([k, v]) => `${k}:${v}`);
  return out;
}

/** Creates the REST client. */
export function createRestClient(o: RestClientOptions) {
  const base = o.baseUrl.replace(/\/+$/, '');
  const doFetch = o.fetch ?? fetch;

  function urlOf(path: string, query?: Query): string {
    const qs = query
      ? Object.entries(query)
          .filter((e): e is [string, string | number | readonly string[]] => e[1] !== undefined)
          .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${encodeURIComponent(k)}=${encodeURIComponent(String(x))}`))
          .join('&')
      : '';
    return `${base}${path}${qs ? `?${qs}` : ''}`;
  }

  function headersOf(extra: Record<string, string> | undefined, hasBody: boolean): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    // a caller's own Authorization wins (a bearer webhook's token): the API key goes only where none is given
    if (o.apiKey && h.authorization === undefined) h.authorization = `Bearer ${o.apiKey}`;
    if (o.clientName) h['x-flowline-client'] = o.clientName;
    if (hasBody) h['content-type'] = 'application/json';
    return h;
  }

  function parse(text: string): unknown {
    if (text === '') return null;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  function refusal(status: number, statusText: string, parsed: unknown): ApiRequestError {
    const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    return new ApiRequestError(status, err?.code ?? `Http${status}`, err?.message ?? statusText, err?.details, parsed);
  }

  /** Any request; answers whatever the status (a refusal is not thrown). */
  async function send(method: string, path: string, opts: SendOptions = {}): Promise<RawResponse> {
    const res = await doFetch(urlOf(path, opts.query), {
      method,
      headers: headersOf(opts.headers, opts.body !== undefined),
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { status: res.status, body: parse(await res.text()), headers: res.headers };
  }

  /** A request whose non-2xx answer throws {@link ApiRequestError}. */
  async function call<T>(method: string, path: string, body?: unknown, query?: Query, headers?: Record<string, string>): Promise<T> {
    const res = await doFetch(urlOf(path, query), {
      method,
      headers: headersOf(headers, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = parse(await res.text());
    if (!res.ok) throw refusal(res.status, res.statusText, parsed);
    return parsed as T;
  }

  /**
   * `GET /v1/runs/{id}/stream`: the run's change pings as Server-Sent Events. Yields one
   * ping per frame, in seq order; ends when the server ends the stream (the run is
   * terminal and fully sent) or when the loop breaks / `signal` aborts.
   */
  async function* stream(runId: string, so: StreamOptions = {}): AsyncGenerator<RunChangedPing, void, undefined> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    so.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const h: Record<string, string> = { accept: 'text/event-stream' };
      if (so.lastEventId !== undefined) h['last-event-id'] = String(so.lastEventId);
      const res = await doFetch(urlOf(`/v1/runs/${encodeURIComponent(runId)}/stream`, { afterSeq: so.afterSeq }), {
        method: 'GET',
        headers: headersOf(h, false),
        signal: ctl.signal,
      });
      if (!res.ok) throw refusal(res.status, res.statusText, parse(await res.text()));
      if (!res.body) return;
      const decoder = new TextDecoder();
      let buffer = '';
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const ping = pingOf(frame);
            if (ping) yield ping;
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    } catch (err) {
      if (so.signal?.aborted && (err as { name?: string } | null)?.name === 'AbortError') return;
      throw err;
    } finally {
      so.signal?.removeEventListener('abort', onAbort);
      ctl.abort();
    }
  }

  /** `POST /v1/files`: one multipart `file` part (fetch writes the boundary); a refusal throws ApiRequestError. */
  async function upload(content: Blob, name: string): Promise<StoredFile> {
    const form = new FormData();
    form.append('file', content, name);
    const res = await doFetch(urlOf('/v1/files'), { method: 'POST', headers: headersOf(undefined, false), body: form });
    const parsed = parse(await res.text());
    if (!res.ok) throw refusal(res.status, res.statusText, parsed);
    return parsed as StoredFile;
  }

  const id = encodeURIComponent;
  const idem = (opts?: ActOptions) => (opts?.idempotencyKey !== undefined ? { 'idempotency-key': opts.idempotencyKey } : undefined);
  const run = (runId: string) => `/v1/runs/${id(runId)}`;
  const node = (runId: string, nodeKey: string) => `${run(runId)}/nodes/${id(nodeKey)}`;
  const conversation = (conversationId: string) => `/v1/conversations/${id(conversationId)}`;

  const runs = {
    /** `POST /v1/definitions/{id}/runs` → 202 `{ runId }`; `idempotencyKey` is sent as the `Idempotency-Key` header */
    start: (defId: string, b: StartRunBody = {}, opts: { idempotencyKey?: string } = {}) =>
      call<{ runId: string }>(
        'POST',
        `/v1/definitions/${id(defId)}/runs`,
        b,
        undefined,
        opts.idempotencyKey !== undefined ? { 'idempotency-key': opts.idempotencyKey } : undefined,
      ),
    /**
     * `POST /v1/definitions/{id}/runs?wait=<seconds>s`: starts the run and waits up to `waitSeconds` (capped by the
     * server's MAX_RUN_WAIT_S) for it to end → `{ runId, run, output }` when it ended, else `{ runId }` (still running)
     */
    startAndWait: (defId: string, b: StartRunBody, waitSeconds: number, opts: { idempotencyKey?: string } = {}) =>
      call<RunResult>(
        'POST',
        `/v1/definitions/${id(defId)}/runs`,
        b,
        { wait: `${Math.max(0, Math.floor(waitSeconds))}s` },
        opts.idempotencyKey !== undefined ? { 'idempotency-key': opts.idempotencyKey } : undefined,
      ),
    /** `GET /v1/runs`, newest first, filtered by the search members */
    list: (q: Omit<RunSearchQuery, 'status'> & { status?: Named<RunStatus> | RunStatus[]; limit?: number; cursor?: string } = {}) =>
      call<Page<RunSummary>>('GET', '/v1/runs', undefined, searchQuery(q as RunSearchQuery)),
    /** `POST /v1/runs/bulk`: `{ count }` for a dry run, else 202 `{ bulkId, count }` (a tracked background job) */
    bulk: <B extends BulkActionBody>(b: B, opts?: ActOptions) =>
      call<B['dryRun'] extends true ? { count: number } : { bulkId: string; count: number }>('POST', '/v1/runs/bulk', b, undefined, idem(opts)),
    /** `GET /v1/bulk-jobs/{bulkId}`: the job's status and counts */
    bulkProgress: (bulkId: string) => call<BulkJob>('GET', `/v1/bulk-jobs/${id(bulkId)}`),
    /** `POST /v1/bulk-jobs/{bulkId}/resume`: a Paused job (canary done, error rate exceeded) goes on */
    bulkResume: (bulkId: string) => call<BulkJob>('POST', `/v1/bulk-jobs/${id(bulkId)}/resume`),
    /** `GET /v1/bulk-jobs/{bulkId}/runs`: the processed runs, each with its outcome and a refusal's reasons */
    bulkRuns: (bulkId: string, q: { outcome?: BulkJobRun['outcome']; limit?: number; cursor?: string } = {}) =>
      call<Page<BulkJobRun>>('GET', `/v1/bulk-jobs/${id(bulkId)}/runs`, undefined, q),
    /** `GET /v1/runs/{id}`: summary, node runs, output, pinned graph */
    get: (runId: string) => call<RunDetail>('GET', run(runId)),
    /** `GET /v1/runs/{id}/blockers`: what each non-terminal node waits for ("why isn't this run moving?") */
    blockers: (runId: string) => call<RunBlockers>('GET', `${run(runId)}/blockers`),
    /** `POST /v1/runs/{id}/fork` → 202 `{ runId, forkedFrom }`: a new run from a node, reusing what succeeded upstream of it */
    fork: (runId: string, b: ForkRunBody, opts?: ActOptions) => call<RunForked>('POST', `${run(runId)}/fork`, b, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/migrate` → 200 the migration plan (verdict, keyed reasons, mapping); executed unless a dry run and only when compatible */
    migrate: (runId: string, b: MigrateRunBody) => call<MigrationPlan>('POST', `${run(runId)}/migrate`, b),
    /** `GET /v1/runs/{id}/nodes/{key}`: node run with its documents and steering */
    node: (runId: string, nodeKey: string) => call<NodeRunDetail>('GET', node(runId, nodeKey)),
    /** `GET /v1/runs/{id}/nodes/{key}/agent-steps`: an Agent's transcript (model answers, tool results, approvals, steering), oldest first */
    agentSteps: (runId: string, nodeKey: string, q: { limit?: number; cursor?: string } = {}) =>
      call<Page<AgentStepRead>>('GET', `${node(runId, nodeKey)}/agent-steps`, undefined, q),
    /** `GET /v1/runs/{id}/events`: one page after `afterSeq` (exclusive) */
    events: (runId: string, q: { afterSeq?: number; limit?: number } = {}) =>
      call<EventPage>('GET', `${run(runId)}/events`, undefined, q),
    /** `GET /v1/runs/{id}/state`: the run state now, or as of event `atSeq` */
    state: (runId: string, q: { atSeq?: number } = {}) => call<RunStateAt>('GET', `${run(runId)}/state`, undefined, q),
    /** every event after `afterSeq`, reading page after page until one is not truncated */
    async allEvents(runId: string, afterSeq = 0): Promise<LiveEvent[]> {
      const out: LiveEvent[] = [];
      for (;;) {
        const page = await call<EventPage>('GET', `${run(runId)}/events`, undefined, { afterSeq: out.at(-1)?.seq ?? afterSeq });
        out.push(...page.events);
        if (!page.truncated || page.events.length === 0) return out;
      }
    },
    /** `GET /v1/runs/{id}/stream` (SSE) */
    stream,
    /** `POST /v1/runs/{id}/cancel` → 202 (idempotent) */
    cancel: (runId: string, b: { reason?: string } = {}, opts?: ActOptions) =>
      call<Accepted>('POST', `${run(runId)}/cancel`, b.reason === undefined ? undefined : b, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/reschedule` → 200 `{ runId, notBefore }`; 409 RunStateConflict unless the run is Scheduled */
    reschedule: (runId: string, b: RescheduleBody, opts?: ActOptions) =>
      call<RunRescheduled>('POST', `${run(runId)}/reschedule`, b, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/nodes/{key}/decide` → 202 */
    decide: (runId: string, nodeKey: string, b: DecideBody, opts?: ActOptions) =>
      call<DecideAccepted>('POST', `${node(runId, nodeKey)}/decide`, b, undefined, idem(opts)),
    /**
     * `POST` of a principal's signed approval link (its path, against this client's base URL; the
     * link is the credential, no key is needed) → 202 with the gate's progress; 403 `ApprovalForbidden`
     */
    decideByLink: (linkUrl: string, b: Omit<DecideBody, 'payload'>) => call<DecideAccepted>('POST', new URL(linkUrl, 'http://x').pathname, b),
    /** `POST /v1/runs/{id}/signals` → 202 (idempotent by `requestId`): kept until a Wait node on the channel consumes it */
    signal: (runId: string, b: SignalBody, opts?: ActOptions) => call<SignalAccepted>('POST', `${run(runId)}/signals`, b, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/nodes/{key}/steer` → 202 */
    steer: (runId: string, nodeKey: string, b: SteerBody, opts?: ActOptions) =>
      call<Accepted>('POST', `${node(runId, nodeKey)}/steer`, b, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/pause` → 202 */
    pause: (runId: string, opts?: ActOptions) => call<Accepted>('POST', `${run(runId)}/pause`, undefined, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/resume` → 202 */
    resume: (runId: string, opts?: ActOptions) => call<Accepted>('POST', `${run(runId)}/resume`, undefined, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/step` → 202 `{ accepted, stepId, coalesced }` (paused runs only) */
    step: (runId: string, b: StepBody, opts?: ActOptions) => call<StepAccepted>('POST', `${run(runId)}/step`, b, undefined, idem(opts)),
    /** `PUT /v1/runs/{id}/breakpoints` → 200 `{ nodeKeys }` (replaces the set) */
    setBreakpoints: (runId: string, nodeKeys: string[], opts?: ActOptions) =>
      call<Breakpoints>('PUT', `${run(runId)}/breakpoints`, { nodeKeys }, undefined, idem(opts)),
    /** `PUT /v1/runs/{id}/edges/{edgeKey}/override` → 200; `null` clears the override */
    overrideEdge: (runId: string, edgeKey: string, verdict: boolean | null, opts?: ActOptions) =>
      call<EdgeOverride>('PUT', `${run(runId)}/edges/${id(edgeKey)}/override`, { verdict }, undefined, idem(opts)),
    /**
     * `POST /v1/runs/{id}/nodes/{key}/skip` `{ prune? }` → 202 (a Pending node or a waiting gate): declared not taken,
     * its dependents proceed; with `prune: true` what only it feeds is skipped with it
     */
    skip: (runId: string, nodeKey: string, opts?: ActOptions & { prune?: boolean }) =>
      call<Accepted>('POST', `${node(runId, nodeKey)}/skip`, opts?.prune === undefined ? undefined : { prune: opts.prune }, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/nodes/{key}/retry` → 202 (a Failed node or a held decision) */
    retry: (runId: string, nodeKey: string, opts?: ActOptions) => call<Accepted>('POST', `${node(runId, nodeKey)}/retry`, undefined, undefined, idem(opts)),
    /** `POST /v1/runs/{id}/nodes/{key}/complete` `{ output }` → 202 (operator completion) */
    complete: (runId: string, nodeKey: string, output: unknown, opts?: ActOptions) =>
      call<Accepted>('POST', `${node(runId, nodeKey)}/complete`, { output }, undefined, idem(opts)),
    /** `PUT /v1/runs/{id}/nodes/{key}/input` `{ input }` → 200 (Pending nodes only) */
    setInput: (runId: string, nodeKey: string, input: unknown, opts?: ActOptions) =>
      call<NodeInputOverride>('PUT', `${node(runId, nodeKey)}/input`, { input }, undefined, idem(opts)),
    /** `GET /v1/runs/{id}/controls`: paused, breakpoints, edge overrides, an unconsumed step */
    controls: (runId: string) => call<RunControls>('GET', `${run(runId)}/controls`),
  };

  return {
    /** raw call for routes without a method here; throws {@link ApiRequestError} on a non-2xx answer */
    call,
    /** `GET /v1/whoami`: the key's principal, tenant and scopes, a managed key's id and constraints (`authRequired` false without API_KEYS) */
    whoami: () => call<Whoami>('GET', '/v1/whoami'),
    /** each lane's waiting jobs and the workers serving it */
    workers: () => call<{ lanes: LaneInfo[] }>('GET', '/v1/workers'),
    /** how the console signs in (public: no key needed) */
    authConfig: () => call<AuthConfig>('GET', '/auth/config'),
    /** ends this browser's single sign-on session (its cookie); idempotent */
    signOut: () => call<void>('POST', '/auth/logout'),
    apiKeys: {
      /** `POST /v1/api-keys` → 201 the key with its `secret` (shown once); 403 `ScopeEscalation`; 409 `ManagedKeysDisabled` */
      create: (b: ApiKeyCreate) => call<ApiKeyWithSecret>('POST', '/v1/api-keys', b),
      /** `GET /v1/api-keys`: newest first, revoked ones included (never a secret) */
      list: (q: { limit?: number; cursor?: string } = {}) => call<Page<ApiKey>>('GET', '/v1/api-keys', undefined, q),
      /** `GET /v1/api-keys/{id}` */
      get: (keyId: string) => call<ApiKey>('GET', `/v1/api-keys/${id(keyId)}`),
      /** `POST /v1/api-keys/{id}/rotate` → the new `secret` once; the old one works `graceSeconds` more */
      rotate: (keyId: string, graceSeconds: number) => call<ApiKeyWithSecret>('POST', `/v1/api-keys/${id(keyId)}/rotate`, { graceSeconds }),
      /** `DELETE /v1/api-keys/{id}` → 204: every replica refuses the key within moments */
      revoke: (keyId: string) => call<void>('DELETE', `/v1/api-keys/${id(keyId)}`),
    },
    /** raw request; answers `{ status, body, headers }` whatever the status */
    send,
    audit: {
      /** `GET /v1/audit` (`audit` scope): newest first; `pending` puts the rows not chained yet first */
      list: (q: AuditQuery & { limit?: number; cursor?: string; pending?: boolean } = {}) =>
        call<Page<AuditRecord>>('GET', '/v1/audit', undefined, { ...q, pending: q.pending === undefined ? undefined : String(q.pending) }),
      /** `GET /v1/audit/export`: every matching row, oldest first (NDJSON, parsed) */
      export: async (q: AuditQuery = {}): Promise<AuditRecord[]> => {
        const res = await doFetch(urlOf('/v1/audit/export', { ...q }), { method: 'GET', headers: headersOf({ accept: 'application/x-ndjson' }, false) });
        const text = await res.text();
        if (!res.ok) throw refusal(res.status, res.statusText, parse(text));
        return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditRecord);
      },
      /** `GET /v1/audit/verify`: the chain proven, or the first seq where it breaks */
      verify: () => call<AuditVerification>('GET', '/v1/audit/verify'),
    },
    definitions: {
      /** `POST /v1/definitions` → 201; 400 `GraphInvalid` with `details` */
      create: (b: { name: string; description?: string | null; graph: unknown }) => call<Definition>('POST', '/v1/definitions', b),
      /** `GET /v1/definitions` (no graph) */
      list: (q: { limit?: number; cursor?: string } = {}) => call<Page<DefinitionSummary>>('GET', '/v1/definitions', undefined, q),
      /** `GET /v1/definitions/{id}` with its graph */
      get: (defId: string) => call<Definition>('GET', `/v1/definitions/${id(defId)}`),
      /** `PUT /v1/definitions/{id}` → version + 1; 409 `VersionConflict` */
      update: (defId: string, b: { name?: string; description?: string | null; graph?: unknown; version: number }) =>
        call<Definition>('PUT', `/v1/definitions/${id(defId)}`, b),
      /** `DELETE /v1/definitions/{id}` → 204 (`null`); 409 `DefinitionInUse` */
      delete: (defId: string) => call<null>('DELETE', `/v1/definitions/${id(defId)}`),
      /** `POST /v1/definitions/{id}/duplicate` → 201 "<name> (copy)" */
      duplicate: (defId: string) => call<Definition>('POST', `/v1/definitions/${id(defId)}/duplicate`),
      /** `GET /v1/definitions/{id}/render?format=mermaid|dot` → `{ format, text, version }` of the current version */
      render: (defId: string, format: 'mermaid' | 'dot' = 'mermaid') =>
        call<GraphRendering>('GET', `/v1/definitions/${id(defId)}/render`, undefined, { format }),
      /** `GET /v1/definitions/{id}/describe` → the current version's nodes, edges and analysis */
      describe: (defId: string) => call<GraphDescription>('GET', `/v1/definitions/${id(defId)}/describe`),
      /** `GET /v1/definitions/{id}/versions` → its saved versions, newest first (no graph) */
      versions: (defId: string, q: { limit?: number; cursor?: string } = {}) =>
        call<Page<DefinitionVersionSummary>>('GET', `/v1/definitions/${id(defId)}/versions`, undefined, q),
      /** `GET /v1/definitions/{id}/versions/{version}` → that saved version with its graph */
      version: (defId: string, version: number) => call<DefinitionVersion>('GET', `/v1/definitions/${id(defId)}/versions/${encodeURIComponent(String(version))}`),
      /** `DELETE /v1/definitions/{id}/versions/{version}` → 204 (`null`); 409 `VersionInUse` (details: liveRuns, schedules, aliases) or `VersionIsLatest` */
      retireVersion: (defId: string, version: number) => call<null>('DELETE', `/v1/definitions/${id(defId)}/versions/${encodeURIComponent(String(version))}`),
      /** `GET /v1/definitions/{id}/diff?from&to` → nodes and edges added, removed and changed member by member, schema changes */
      diff: (defId: string, from: number, to: number) => call<DefinitionDiff>('GET', `/v1/definitions/${id(defId)}/diff`, undefined, { from, to }),
      /** `GET /v1/definitions/{id}/aliases` → its version aliases by name */
      aliases: (defId: string) => call<Page<DefinitionAlias>>('GET', `/v1/definitions/${id(defId)}/aliases`),
      /** `PUT /v1/definitions/{id}/aliases/{name}` → the alias as set (`current` moves what a start naming no version runs) */
      setAlias: (defId: string, name: string, b: PutAliasBody) => call<DefinitionAlias>('PUT', `/v1/definitions/${id(defId)}/aliases/${encodeURIComponent(name)}`, b),
      /** `DELETE /v1/definitions/{id}/aliases/{name}` → 204 */
      deleteAlias: (defId: string, name: string) => call<void>('DELETE', `/v1/definitions/${id(defId)}/aliases/${encodeURIComponent(name)}`),
      /** `POST /v1/definitions/validate` → `{ valid, errors, warnings }` */
      validate: (graph: unknown) => call<GraphValidation>('POST', '/v1/definitions/validate', { graph }),
      /** `POST /v1/definitions/{id}/validate` → the saved definition judged against the catalog and caps as they are now */
      validateSaved: (defId: string) => call<GraphValidation>('POST', `/v1/definitions/${id(defId)}/validate`),
      /** `POST /v1/definitions/{id}/disable` → `enabled: false`; starts answer 409 `DefinitionDisabled` */
      disable: (defId: string) => call<Definition>('POST', `/v1/definitions/${id(defId)}/disable`),
      /** `POST /v1/definitions/{id}/enable` → `enabled: true` */
      enable: (defId: string) => call<Definition>('POST', `/v1/definitions/${id(defId)}/enable`),
    },
    runs,
    tools: {
      /** `GET /v1/tools`: what a Tool node may name */
      list: () => call<Page<ToolCatalogEntry>>('GET', '/v1/tools'),
    },
    waitpoints: {
      /** `GET /v1/waitpoints`, newest first, optionally of one run and one status */
      list: (q: { runId?: string; status?: Waitpoint['status']; limit?: number; cursor?: string } = {}) => call<Page<Waitpoint>>('GET', '/v1/waitpoints', undefined, q),
      /** `GET /v1/waitpoints/{id}` */
      get: (waitpointId: string) => call<Waitpoint>('GET', `/v1/waitpoints/${id(waitpointId)}`),
      /** `POST /v1/waitpoints/{id}/complete` `{ payload }` → 200; 422 `WaitpointPayloadInvalid`, 410 `WaitpointExpired` / `WaitpointRevoked` */
      complete: (waitpointId: string, payload: unknown) => call<WaitpointCompleted>('POST', `/v1/waitpoints/${id(waitpointId)}/complete`, { payload }),
      /** `DELETE /v1/waitpoints/{id}` → 200 the revoked token; 409 `WaitpointNotWaiting` */
      revoke: (waitpointId: string) => call<Waitpoint>('DELETE', `/v1/waitpoints/${id(waitpointId)}`),
      /**
       * `POST` of a token's signed callback URL (its path, against this client's base URL) with the
       * payload as the whole body → 200; 403 `WaitpointSignatureInvalid`
       */
      callback: (callbackUrl: string, payload: unknown) => call<WaitpointCallbackAnswer>('POST', new URL(callbackUrl, 'http://x').pathname, payload ?? null),
    },
    events: {
      /**
       * `POST /v1/events` → 202 `{ accepted, ids, duplicates }`: each new event starts a run of every definition whose `triggers`
       * match it and reaches Wait nodes' event arms (deduplicated by id)
       */
      send: (events: InboundEvent[]) => call<EventsAccepted>('POST', '/v1/events', events),
      /** `GET /v1/events`: the tenant's events newest first, optionally of one name and a receivedAt window (`from` inclusive, `to` exclusive) */
      list: (q: EventListQuery = {}) => call<Page<EventListItem>>('GET', '/v1/events', undefined, q),
      /** `GET /v1/events/{id}`: the event and what each subscribed definition made of it */
      get: (eventId: string) => call<EventDetail>('GET', `/v1/events/${id(eventId)}`),
      /** `POST /v1/events/{id}/replay`: judged again by the definitions named (default: every one listening now); never a second run */
      replay: (eventId: string, definitionIds?: string[]) =>
        call<{ matches: Array<Omit<EventMatch, 'definitionName' | 'at'>> }>('POST', `/v1/events/${id(eventId)}/replay`, definitionIds === undefined ? {} : { definitionIds }),
    },
    webhooks: {
      /** `POST /v1/webhooks` → 201 the hook with its `url` and, when generated, its `secret` (shown once); 409 `WebhookSlugTaken` */
      create: (b: WebhookBody) => call<Webhook>('POST', '/v1/webhooks', b),
      /** `GET /v1/webhooks`: the tenant's hooks by slug (secrets by id only) */
      list: () => call<{ items: Webhook[] }>('GET', '/v1/webhooks'),
      /** `GET /v1/webhooks/{id}` */
      get: (hookId: string) => call<Webhook>('GET', `/v1/webhooks/${id(hookId)}`),
      /** `PUT /v1/webhooks/{id}`: replaces it (a listed secret id without a value keeps its value; a new one is generated and answered once) */
      update: (hookId: string, b: WebhookBody) => call<Webhook>('PUT', `/v1/webhooks/${id(hookId)}`, b),
      /** `DELETE /v1/webhooks/{id}` → 204, with its delivery log */
      delete: (hookId: string) => call<void>('DELETE', `/v1/webhooks/${id(hookId)}`),
      /** `GET /v1/webhooks/{id}/deliveries`: newest first, with their verdicts */
      deliveries: (hookId: string, limit?: number) =>
        call<{ items: WebhookDelivery[] }>('GET', `/v1/webhooks/${id(hookId)}/deliveries`, undefined, limit === undefined ? undefined : { limit: String(limit) }),
      /** `POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay`: the kept body delivered again (a started run answers again) */
      replay: (hookId: string, deliveryId: string) => call<WebhookDelivery>('POST', `/v1/webhooks/${id(hookId)}/deliveries/${id(deliveryId)}/replay`),
      /** `POST` of a JSON body to a hook's URL (its path, against this client's base URL) with the sender's headers; no key is sent by the server's rule */
      deliver: (hookUrl: string, body: unknown, headers: Record<string, string> = {}) =>
        call<{ deliveryId: string; runId?: string; eventId?: string; duplicate?: boolean }>('POST', new URL(hookUrl, 'http://x').pathname, body, undefined, headers),
    },
    mcpServers: {
      /** `POST /v1/mcp-servers` → 201; 409 `McpServerNameTaken`; 400 for a private address outside MCP_ALLOWED_HOSTS */
      create: (b: McpServerBody) => call<McpServer>('POST', '/v1/mcp-servers', b),
      /** `GET /v1/mcp-servers`: the tenant's servers by name (the deployment's stdio servers are not listed) */
      list: () => call<{ items: McpServer[] }>('GET', '/v1/mcp-servers'),
      /** `GET /v1/mcp-servers/{id}` (id or name) */
      get: (ref: string) => call<McpServer>('GET', `/v1/mcp-servers/${id(ref)}`),
      /** `PUT /v1/mcp-servers/{id}` (id or name) → version + 1; absent `headers` are kept */
      update: (ref: string, b: McpServerBody) => call<McpServer>('PUT', `/v1/mcp-servers/${id(ref)}`, b),
      /** `DELETE /v1/mcp-servers/{id}` (id or name) → 204 (`null`) */
      delete: (ref: string) => call<null>('DELETE', `/v1/mcp-servers/${id(ref)}`),
      /** `GET /v1/mcp-servers/{id}/tools`: connects and lists the server's tools (a connection test); 502 `McpServerUnreachable` */
      tools: (ref: string) => call<{ items: McpToolListing[] }>('GET', `/v1/mcp-servers/${id(ref)}/tools`),
    },
    agents: {
      /** `POST /v1/agents` → 201 at version 1; 409 `AgentNameTaken`; 400 `ValidationFailed` keyed to the member */
      create: (b: SavedAgentBody) => call<SavedAgent>('POST', '/v1/agents', b),
      /** `GET /v1/agents`: the tenant's saved agents at their latest version, by name */
      list: (q: { limit?: number; cursor?: string } = {}) => call<Page<SavedAgent>>('GET', '/v1/agents', undefined, q),
      /** `GET /v1/agents/{id}`, at its latest version or `version` */
      get: (agentId: string, version?: number) =>
        call<SavedAgent>('GET', `/v1/agents/${id(agentId)}`, undefined, version === undefined ? {} : { version: String(version) }),
      /** `PUT /v1/agents/{id}` → a new version (runs already started keep theirs) */
      update: (agentId: string, b: SavedAgentBody) => call<SavedAgent>('PUT', `/v1/agents/${id(agentId)}`, b),
      /** `DELETE /v1/agents/{id}` → 204 (`null`) */
      delete: (agentId: string) => call<null>('DELETE', `/v1/agents/${id(agentId)}`),
      /** `GET /v1/agents/{id}/versions`: newest first, without members */
      versions: (agentId: string, q: { limit?: number; cursor?: string } = {}) =>
        call<Page<SavedAgentVersionSummary>>('GET', `/v1/agents/${id(agentId)}/versions`, undefined, q),
      /** `GET /v1/agents/{id}/versions/{version}` */
      version: (agentId: string, version: number) => call<SavedAgent>('GET', `/v1/agents/${id(agentId)}/versions/${encodeURIComponent(String(version))}`),
    },
    schedules: {
      /** `POST /v1/schedules` → the schedule (201 created, or 200: the tenant's schedule of this `key`, updated) */
      upsert: (b: ScheduleBody) => call<Schedule>('POST', '/v1/schedules', b),
      /** `GET /v1/schedules`, newest first */
      list: (q: { limit?: number; cursor?: string } = {}) => call<Page<Schedule>>('GET', '/v1/schedules', undefined, q),
      get: (scheduleId: string) => call<Schedule>('GET', `/v1/schedules/${id(scheduleId)}`),
      /** `PUT /v1/schedules/{id}`: every member replaced; 409 `ScheduleKeyTaken` */
      replace: (scheduleId: string, b: ScheduleBody) => call<Schedule>('PUT', `/v1/schedules/${id(scheduleId)}`, b),
      /** `DELETE /v1/schedules/{id}` → 204 (`null`); the runs it started stay */
      delete: (scheduleId: string) => call<null>('DELETE', `/v1/schedules/${id(scheduleId)}`),
      pause: (scheduleId: string, b: { reason?: string } = {}) => call<Schedule>('POST', `/v1/schedules/${id(scheduleId)}/pause`, b),
      /** `POST /v1/schedules/{id}/resume`: slots count from now (the paused ones are not caught up) */
      resume: (scheduleId: string) => call<Schedule>('POST', `/v1/schedules/${id(scheduleId)}/resume`),
      /** `POST /v1/schedules/{id}/trigger` → 202 `{ runId, slotAt }`: a run now */
      trigger: (scheduleId: string) => call<{ runId: string; slotAt: string }>('POST', `/v1/schedules/${id(scheduleId)}/trigger`),
      /** `POST /v1/schedules/{id}/backfill`: one run per past slot not yet in the ledger (`dryRun`: list them only) */
      backfill: (scheduleId: string, b: { from: string; to: string; dryRun?: boolean }) => call<ScheduleBackfill>('POST', `/v1/schedules/${id(scheduleId)}/backfill`, b),
      /** `GET /v1/schedules/{id}/preview?count=`: the next slots with their UTC offsets */
      preview: (scheduleId: string, count?: number) =>
        call<{ timezone: string; slots: ScheduleSlotView[] }>('GET', `/v1/schedules/${id(scheduleId)}/preview`, undefined, count === undefined ? {} : { count: String(count) }),
      /** `GET /v1/schedules/{id}/slots`: the ledger, newest slot first */
      slots: (scheduleId: string, q: { limit?: number; cursor?: string } = {}) => call<Page<ScheduleSlot>>('GET', `/v1/schedules/${id(scheduleId)}/slots`, undefined, q),
    },
    files: {
      /**
       * `POST /v1/files` → 201 `{ fileId, name, bytes, sha256, contentType, kind }` (the Blob's type is the
       * content type; `image/*` is kind `image`); 413 `PayloadTooLarge` past MAX_UPLOAD_BYTES. Pass
       * `{ fileId, name, kind, bytes }` as an attachment of `conversations.send`.
       */
      upload,
      /** `GET /v1/files/{id}`: the metadata of an upload of this tenant; 404 `NotFound` for another tenant's */
      get: (fileId: string) => call<StoredFile>('GET', `/v1/files/${id(fileId)}`),
    },
    conversations: {
      /** `GET /v1/conversations`, newest first; `definitionId` keeps those whose bound run is of it */
      list: (q: { definitionId?: string; limit?: number; cursor?: string } = {}) => call<Page<Conversation>>('GET', '/v1/conversations', undefined, q),
      /** `POST /v1/conversations/{id}/messages` → 202 `{ runId, messageId, action }`; 409 `RunBusy`, `RerunConfirmationRequired` */
      send: (conversationId: string, b: SendMessageBody) => call<MessageAccepted>('POST', `${conversation(conversationId)}/messages`, b),
      /** `GET /v1/conversations/{id}/messages`, oldest first (published answers included) */
      messages: (conversationId: string, q: { limit?: number; cursor?: string } = {}) =>
        call<Page<ConversationMessage>>('GET', `${conversation(conversationId)}/messages`, undefined, q),
      /** `GET /v1/conversations/{id}/runs`, newest first */
      runs: (conversationId: string, q: { limit?: number; cursor?: string } = {}) =>
        call<Page<ConversationRun>>('GET', `${conversation(conversationId)}/runs`, undefined, q),
      /** `DELETE /v1/conversations/{id}` → 204 (`null`): its messages deleted, its runs unbound (never deleted) */
      purge: (conversationId: string) => call<null>('DELETE', conversation(conversationId)),
    },
    ops: {
      /** `GET /healthz` → `{ status: "ok" }` */
      healthz: () => call<Health>('GET', '/healthz'),
      /** `GET /livez` → `{ status: "ok" }` (the same as healthz) */
      livez: () => call<Health>('GET', '/livez'),
      /** `GET /readyz` → `{ status: "ready" }`; 503 `NotReady` when Postgres or Redis does not answer or the API drains */
      readyz: () => call<Health>('GET', '/readyz'),
      /** `GET /metrics`: Prometheus text */
      metrics: () => call<string>('GET', '/metrics'),
      /** `GET /openapi.json`: the generated OpenAPI 3.1 document */
      openApi: () => call<{ openapi: string; paths: Record<string, Record<string, unknown>>; [k: string]: unknown }>('GET', '/openapi.json'),
      /** `GET /docs`: the HTML of the API docs UI */
      docs: () => call<string>('GET', '/docs'),
    },
  };
}

/** One SSE frame → its `runChanged` ping (comments, keepalives and other events → null). */
function pingOf(frame: string): RunChangedPing | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (event !== 'runChanged' || data.length === 0) return null;
  try {
    return JSON.parse(data.join('\n')) as RunChangedPing;
  } catch {
    return null;
  }
}

/** The REST client's type. */
export type RestClient = ReturnType<typeof createRestClient>;
