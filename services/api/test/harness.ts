/**
 * Integration harness: the app over a per-file Postgres database and real Redis, driven
 * in-process with `app.request`. Not a test file.
 */
import { once } from 'node:events';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { applyPlans, claimShards, loadSnapshots } from '@flowline/db';
import { DEFAULT_CORE_OPTIONS, plan } from '@flowline/graph';
import { createTestDatabase, createTestRedis, type TestDatabase } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { loadConfig } from '@flowline/runtime';
import { createApp } from '../src/app';
import { apiConfigSchema } from '../src/config';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveServer } from '../src/live';
import type { ApiKeyTable } from '../src/auth';
import type { ApiLimits, AppDeps } from '../src/context';
import { DEFAULT_MANAGED_KEY_TUNING, type ManagedKeyOptions } from '../src/principals/managed-keys';

export const KEYS = { a: 'key-tenant-a', b: 'key-tenant-b' } as const;

/** Managed API keys as the tests run them: a fixed pepper, the default cache tuning. */
export const TEST_MANAGED_KEYS: ManagedKeyOptions = { pepper: Buffer.from('test-pepper-of-managed-api-keys-0123456789'), ...DEFAULT_MANAGED_KEY_TUNING };

export interface Harness {
  app: ReturnType<typeof createApp>;
  /** what the app was built from (a second replica is `createApp({ ...deps })`) */
  deps: AppDeps;
  db: TestDatabase;
  redis: Redis;
  /** the Redis URL of this harness (for an in-process dispatcher) */
  redisUrl: string;
  prefix: string;
  /** JSON request as tenant A unless `token` says otherwise (null = no Authorization). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; res: Response }>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  raw?: string;
  token?: string | null;
  headers?: Record<string, string>;
}

/**
 * Builds the app against a fresh database; `limits` override the defaults. `apiKeys`
 * defaults to tenants A and B ({@link KEYS}); null runs single-tenant without auth.
 */
export async function startHarness(
  limits: Partial<ApiLimits> = {},
  apiKeys: ApiKeyTable | null | undefined = undefined,
  extra: Partial<Pick<AppDeps, 'edge' | 'bullBoardWrite' | 'adminSessionTtlS' | 'mcp' | 'managedKeys'>> = {},
): Promise<Harness> {
  const db = await createTestDatabase();
  const tr = createTestRedis();
  const redis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  const tools = await createToolRegistry({ testTools: true });
  const keys = apiKeys !== undefined ? apiKeys : new Map<string, string>([[KEYS.a, 'tenantA'], [KEYS.b, 'tenantB']]);
  const deps: AppDeps = {
    pool: db.pool,
    redis,
    apiKeys: keys,
    managedKeys: TEST_MANAGED_KEYS,
    limits: {
      maxNodesPerDefinition: 200,
      maxRunInputBytes: 65_536,
      eventReplayLimit: 200,
      shardCount: 16,
      streamPollMs: 50,
      maxSteersPerNode: 5,
      ...limits,
    },
    tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
    queuePrefix: tr.prefix,
    logger: pino({ level: 'silent' }),
    ...extra,
  };
  const app = createApp(deps);
  return {
    app,
    deps,
    db,
    redis,
    redisUrl: tr.url,
    prefix: tr.prefix,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? KEYS.a : opts.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (opts.raw !== undefined) body = opts.raw;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await app.request(path, { method, headers, body });
      const text = await res.clone().text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        /* not JSON (metrics, docs) */
      }
      return { status: res.status, body: parsed, res };
    },
    async close() {
      redis.disconnect();
      await tr.cleanup();
      await db.drop();
    },
  };
}

/** One dispatcher tick of `runId` (load → plan → apply), committed in-process: no dispatcher runs in these tests. */
export async function tickRun(h: Harness, runId: string, now = Date.now()): Promise<void> {
  const [snap] = await loadSnapshots(h.db.pool, [runId], { maxConcurrentRuns: 100 });
  const p = plan(snap!, { now, options: DEFAULT_CORE_OPTIONS, newId: () => randomUUID() });
  const out = await applyPlans(h.db.pool, [{ snapshot: snap!, plan: p }], { shardCount: 16 });
  if (out.failed.length > 0) throw new Error(`tick of ${runId} failed: ${JSON.stringify(out.failed)}`);
}

/** The harness's app served on 127.0.0.1 with the live channel attached. */
export interface ServedHarness {
  url: string;
  live: LiveServer;
  close(): Promise<void>;
}

/**
 * Serves the harness's app (or `replica`, another app over the same stores) on a port with its
 * live channel (the app's keys and managed-key settings, its Redis connection: one key cache
 * with the app), for tests of sockets and of client addresses.
 */
export async function serveHarness(h: Harness, replica?: { app: Harness['app']; deps: AppDeps }): Promise<ServedHarness> {
  const { app, deps } = replica ?? h;
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  const live = attachLive(server, {
    pool: deps.pool,
    redis: deps.redis,
    apiKeys: deps.apiKeys,
    ...(deps.managedKeys ? { managedKeys: deps.managedKeys } : {}),
    queuePrefix: deps.queuePrefix,
    eventReplayLimit: 200,
    options: DEFAULT_LIVE_OPTIONS,
    logger: pino({ level: 'silent' }),
  });
  await live.ready;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live,
    async close() {
      await live.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * Loads the API's config from `env` as the process does at boot and answers how it refused:
 * the exit code and the printed lines. Throws when the config was accepted.
 */
export function bootRefusal(env: Record<string, string>): { code: number; printed: string } {
  const lines: string[] = [];
  let code: number | undefined;
  try {
    loadConfig(apiConfigSchema, env, {
      print: (l) => lines.push(l),
      exit: (c) => {
        code = c;
        throw new Error('exited');
      },
    });
  } catch (err) {
    if (code !== undefined) return { code, printed: lines.join('\n') };
    throw err;
  }
  throw new Error(`the config was accepted: ${Object.keys(env).join(', ')}`);
}

/** The dispatcher id {@link holdShards} leases the shards as. */
export const TEST_DISPATCHER = 'api-test-dispatcher';

/**
 * Leases every shard to a stand-in dispatcher for `leaseMs` (as a live dispatcher's heartbeat
 * does), for tests of /readyz, which is not ready while no dispatcher holds a shard.
 */
export async function holdShards(h: Harness, leaseMs = 600_000): Promise<void> {
  await claimShards(h.db.pool, TEST_DISPATCHER, h.deps.limits.shardCount, leaseMs);
}

/** Start → Pause(gate) → End(yes|no); Start takes `{ n?: number }`. */
export function pauseGraph(opts: { requireComment?: boolean; allowed?: string[] } = {}) {
  return {
    nodes: [
      { key: 'start', kind: 'Start', config: { inputSchema: { type: 'object', properties: { n: { type: 'number' } } } } },
      {
        key: 'gate',
        kind: 'Pause',
        config: { prompt: 'ship it?', allowedDecisions: opts.allowed ?? ['Approve', 'Reject'], requireComment: opts.requireComment ?? false },
      },
      { key: 'yes', kind: 'End', config: { outcome: 'approved' } },
      { key: 'no', kind: 'End', config: { outcome: 'rejected' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'gate' },
      { key: 'e2', from: 'gate', to: 'yes', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
      { key: 'e3', from: 'gate', to: 'no', condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } },
    ],
  };
}

/** Start → w (a Wait with `config`) → end, whose result is the Wait's output. */
export function waitGraph(config: Record<string, unknown>) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'w', kind: 'Wait', config },
      { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input.output' } },
    ],
    edges: [{ key: 'e1', from: 'start', to: 'w' }, { key: 'e2', from: 'w', to: 'end' }],
  };
}

/** Start → End. */
export function lineGraph(extra: Record<string, unknown> = {}) {
  return {
    ...extra,
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [{ key: 'e1', from: 'start', to: 'end' }],
  };
}

/** Start → Agent(agent, `config`) → End. */
export function agentGraph(config: Record<string, unknown>) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'agent', kind: 'Agent', config },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'agent' },
      { key: 'e2', from: 'agent', to: 'end' },
    ],
  };
}

/** Chat graph: Start → ChatInput(ask) → End. */
export function chatGraph() {
  return {
    kind: 'Chat',
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'ask', kind: 'ChatInput', config: { prompt: 'say something' } },
      { key: 'end', kind: 'End', config: { outcome: 'answered' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'ask' },
      { key: 'e2', from: 'ask', to: 'end' },
    ],
  };
}

/** Creates a definition as tenant A (or `token`) and returns its id. */
export async function createDefinition(h: Harness, graph: unknown, name = 'flow', token?: string): Promise<string> {
  const r = await h.call('POST', '/v1/definitions', { body: { name, graph }, ...(token ? { token } : {}) });
  if (r.status !== 201) throw new Error(`create definition: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

/** Starts a run and returns its id. */
export async function startRun(h: Harness, definitionId: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await h.call('POST', `/v1/definitions/${definitionId}/runs`, { body });
  if (r.status !== 202) throw new Error(`start run: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.runId as string;
}
