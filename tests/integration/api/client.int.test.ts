/**
 * `@flowline/client` against the real API: one HTTP server with its live channel over a
 * per-file Postgres database and real Redis, the real dispatcher and tool worker
 * in-process. Every client method is called at least once, refusals surface as
 * ApiRequestError with the contract's code, and the last test checks that every route of
 * the OpenAPI document was reached through the client.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createTestDatabase, createTestRedis, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { appendAgentStep } from '@flowline/db';
import { activityStreamKey, runRoom } from '@flowline/queue';
import {
  ApiRequestError,
  createClient,
  isApiRequestError,
  type FlowlineClient,
  type NodeActivity,
  type RunChange,
  type RunChangedPing,
  type RunDetail,
} from '@flowline/client';
// The real dispatcher and tool worker, run in-process (tests only; services never import each other).
import { createDispatcher, type Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { dispatcherConfigSchema } from '../../../services/dispatcher/src/config';
import { createToolWorker, type ToolWorker } from '../../../services/worker-tool/src/worker';
import { createApp } from '../../../services/api/src/app';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveServer } from '../../../services/api/src/live';
import { agentGraph, chatGraph, KEYS, lineGraph, pauseGraph, TEST_MANAGED_KEYS as MANAGED_KEYS, waitGraph } from '../../../services/api/test/harness';

const SHARD_COUNT = 4;
const TENANT_KEYS = new Map<string, string>([[KEYS.a, 'tenantA'], [KEYS.b, 'tenantB']]);
const logger = pino({ level: 'silent' });

let db: TestDatabase;
let tr: TestRedis;
let apiRedis: Redis;
let laneRedis: Redis;
let live: LiveServer;
let server: HttpServer;
let dispatcher: Dispatcher;
let toolWorker: ToolWorker;
let baseUrl: string;
const clients: FlowlineClient[] = [];

/** Every request any client of this file made: `METHOD /path` without the query. */
const requests: string[] = [];
const recordingFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  requests.push(`${(init?.method ?? 'GET').toUpperCase()} ${url.pathname}`);
  return fetch(input, init);
};

function client(apiKey: string = KEYS.a): FlowlineClient {
  const c = createClient({ baseUrl, apiKey, fetch: recordingFetch });
  clients.push(c);
  return c;
}

/** The ApiRequestError a call was refused with (fails when it was not refused). */
async function refusal(p: Promise<unknown>): Promise<ApiRequestError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiRequestError) return err;
    throw err;
  }
  throw new Error('expected the call to be refused');
}

async function waitForRun(c: FlowlineClient, runId: string, pred: (d: RunDetail) => boolean, description: string): Promise<RunDetail> {
  return waitFor(async () => {
    const d = await c.runs.get(runId);
    return pred(d) ? d : false;
  }, { timeoutMs: 20_000, intervalMs: 50, description });
}

const nodeStatus = (d: RunDetail, key: string) => d.nodeRuns.find((n) => n.nodeKey === key)?.status;

beforeAll(async () => {
  db = await createTestDatabase();
  tr = createTestRedis();
  apiRedis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  laneRedis = new Redis(tr.url, { maxRetriesPerRequest: null });
  const tools = await createToolRegistry({ testTools: true });
  const app = createApp({
    pool: db.pool,
    redis: apiRedis,
    apiKeys: TENANT_KEYS,
    managedKeys: MANAGED_KEYS,
    limits: { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 4, shardCount: SHARD_COUNT, streamPollMs: 50, maxSteersPerNode: 5 },
    tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
    queuePrefix: tr.prefix,
    logger,
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  live = attachLive(server, {
    pool: db.pool,
    redis: apiRedis,
    apiKeys: TENANT_KEYS,
    managedKeys: MANAGED_KEYS,
    queuePrefix: tr.prefix,
    eventReplayLimit: 4,
    options: DEFAULT_LIVE_OPTIONS,
    logger,
  });
  await live.ready;
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const config = dispatcherConfigSchema.parse({
    DATABASE_URL: db.url,
    REDIS_URL: tr.url,
    QUEUE_PREFIX: tr.prefix,
    DISPATCHER_ID: 'client-test',
    SHARD_COUNT: String(SHARD_COUNT),
    SHARD_LEASE_MS: '1500',
    DISPATCH_SWEEP_MS: '100',
    MAX_CONCURRENT_RUNS: '1000',
    CANCEL_DRAIN_GRACE_MS: '200',
    // the LLM node this file marks Running has no worker: no in-flight check interrupts it mid-test
    INFLIGHT_CHECK_EVERY_SWEEPS: '100000',
    SNAPSHOT_CACHE_RUNS: '0',
  });
  dispatcher = createDispatcher({ config, pool: db.pool, redis: laneRedis, log: logger });
  await dispatcher.start();
  toolWorker = createToolWorker({ redis: laneRedis, registry: tools, logger, prefix: tr.prefix, concurrency: 4, shutdownGraceMs: 200 });
  await toolWorker.start();
});

afterAll(async () => {
  for (const c of clients) c.close();
  await toolWorker?.stop();
  await dispatcher?.stop();
  await live?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  apiRedis?.disconnect();
  laneRedis?.disconnect();
  await tr?.cleanup();
  await db?.drop();
});

describe('ops and tools', () => {
  it('reads liveness, readiness, metrics, the OpenAPI document, the docs UI and the tool catalog', async () => {
    const c = client();
    expect(await c.ops.healthz()).toEqual({ status: 'ok' });
    expect(await c.ops.livez()).toEqual({ status: 'ok' });
    expect(await c.ops.readyz()).toEqual({ status: 'ready' });
    expect(await c.ops.metrics()).toMatch(/^# (HELP|TYPE) /m);
    const doc = await c.ops.openApi();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/v1/runs/{id}/nodes/{key}/steer');
    expect(await c.ops.docs()).toMatch(/<html/i);

    expect(await c.whoami()).toEqual({
      tenant: 'tenantA',
      principal: `key:${createHash('sha256').update(KEYS.a, 'utf8').digest('hex').slice(0, 16)}`,
      scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit'],
      keyId: null,
      constraints: null,
      expiresAt: null,
      authRequired: true,
      via: 'key',
      name: null,
      groups: [],
      sessionExpiresAt: null,
    });
    // how the console signs in (no issuer here: keys only), and a sign-out without a session is a no-op
    expect(await c.authConfig()).toEqual({ sso: false, loginUrl: null, authRequired: true });
    expect(await c.signOut()).toBeNull();
    // this harness runs one tool worker in-process, no LLM worker
    const { lanes } = await c.workers();
    expect(lanes.map((l) => [l.lane, l.workers.length])).toEqual([['llm', 0], ['tool', 1]]);
    expect(lanes[1]!.workers[0]).toMatchObject({ pid: process.pid, inFlight: 0, concurrency: expect.any(Number) });

    const tools = await c.tools.list();
    expect(tools.nextCursor).toBeNull();
    const echo = tools.items.find((t) => t.name === 'echo');
    expect(echo).toEqual({ name: 'echo', description: expect.any(String), argumentsSchema: expect.any(Object), requiresAllowedUrls: false });
    expect(tools.items.find((t) => t.name === 'http_fetch')?.requiresAllowedUrls).toBe(true);
  });

  it('surfaces a missing or unknown key as ApiRequestError 401', async () => {
    const err = await refusal(client('not-a-key').tools.list());
    expect(err).toMatchObject({ name: 'ApiRequestError', status: 401 });
    expect(typeof err.code).toBe('string');
    expect(err.body).toMatchObject({ error: { code: err.code } });
  });
});

describe('definitions', () => {
  it('creates, lists, reads, updates, duplicates, validates and deletes, with GraphInvalid, VersionConflict and NotFound refusals', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'client-def', description: 'd', graph: lineGraph() });
    expect(def).toMatchObject({ name: 'client-def', description: 'd', kind: 'Standard', version: 1, nodeCount: 2, graph: lineGraph() });
    expect(Object.keys(def).sort()).toEqual(
      ['createdAt', 'description', 'enabled', 'graph', 'graphHash', 'id', 'kind', 'name', 'nodeCount', 'updatedAt', 'version'],
    );

    const invalid = await refusal(c.definitions.create({ name: 'bad', graph: { nodes: [{ key: 'e', kind: 'End', config: { outcome: 'x' } }], edges: [] } }));
    expect(invalid).toMatchObject({ status: 400, code: 'GraphInvalid' });
    expect(Array.isArray(invalid.details)).toBe(true);
    expect((invalid.details as Array<{ key: string | null; message: string }>).length).toBeGreaterThan(0);

    const v = await c.definitions.validate({ nodes: [], edges: [] });
    expect(v.valid).toBe(false);
    expect(v.errors.length).toBeGreaterThan(0);
    expect(await c.definitions.validate(lineGraph())).toEqual({ valid: true, errors: [], warnings: [] });

    const page = await c.definitions.list({ limit: 200 });
    const listed = page.items.find((d) => d.id === def.id);
    expect(listed).toMatchObject({ kind: 'Standard', version: 1, nodeCount: 2 });
    expect(listed).not.toHaveProperty('graph');
    const first = await c.definitions.list({ limit: 1 });
    expect(first.items).toHaveLength(1);

    const got = await c.definitions.get(def.id);
    expect(got.graphHash).toBe(def.graphHash);
    expect(got.graph).toEqual(lineGraph());

    const updated = await c.definitions.update(def.id, { name: 'renamed', version: 1 });
    expect(updated).toMatchObject({ name: 'renamed', version: 2 });
    const stale = await refusal(c.definitions.update(def.id, { name: 'again', version: 1 }));
    expect(stale).toMatchObject({ status: 409, code: 'VersionConflict' });
    expect(isApiRequestError(stale, 'VersionConflict')).toBe(true);

    expect(await c.definitions.validateSaved(def.id)).toEqual({ valid: true, errors: [], warnings: [] });
    expect(await c.definitions.disable(def.id)).toMatchObject({ id: def.id, enabled: false });
    expect(await refusal(c.runs.start(def.id, {}))).toMatchObject({ status: 409, code: 'DefinitionDisabled' });
    expect(await c.definitions.enable(def.id)).toMatchObject({ id: def.id, enabled: true });

    const copy = await c.definitions.duplicate(def.id);
    expect(copy.name).toBe('renamed (copy)');
    expect(copy.id).not.toBe(def.id);

    expect(await c.definitions.delete(copy.id)).toBeNull();
    expect(await refusal(c.definitions.get(copy.id))).toMatchObject({ status: 404, code: 'NotFound' });
    // another tenant's definition answers 404
    expect(await refusal(client(KEYS.b).definitions.get(def.id))).toMatchObject({ status: 404, code: 'NotFound' });
  });
});

describe('rendering and describing a definition', () => {
  it('renders the current version as Mermaid or DOT and describes it, and refuses an unknown format, id or tenant', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'drawn', graph: lineGraph() });
    const mermaid = await c.definitions.render(def.id);
    expect(mermaid.format).toBe('mermaid');
    expect(mermaid.version).toBe(1);
    expect(mermaid.text.split('\n')[0]).toBe('flowchart LR');
    const dot = await c.definitions.render(def.id, 'dot');
    expect(dot).toMatchObject({ format: 'dot', version: 1 });
    expect(dot.text).toMatch(/^digraph /);
    expect(dot.text).toContain('n0 -> n1');

    const d = await c.definitions.describe(def.id);
    expect(d.version).toBe(1);
    expect(d.nodes.map((n) => n.key)).toEqual(lineGraph().nodes.map((n) => n.key));
    expect(d.analysis).toMatchObject({ start: lineGraph().nodes[0]!.key, nodeCount: 2, edgeCount: 1 });

    // a new version is what both read next
    const g2 = { ...lineGraph(), nodes: [{ ...lineGraph().nodes[0]!, label: 'Begin here' }, lineGraph().nodes[1]!] };
    await c.definitions.update(def.id, { graph: g2, version: 1 });
    expect((await c.definitions.render(def.id)).text).toContain('Begin here');
    expect((await c.definitions.describe(def.id)).version).toBe(2);

    const bad = await c.send('GET', `/v1/definitions/${def.id}/render`, { query: { format: 'png' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('ValidationFailed');
    expect(await refusal(c.definitions.describe('3f0c7d5e-0000-4000-8000-000000000000'))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(c.definitions.render('not-a-uuid'))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(client(KEYS.b).definitions.describe(def.id))).toMatchObject({ status: 404, code: 'NotFound' });
  });
});

describe('definition versions', () => {
  it('lists the saved versions newest first and reads one with its graph, and refuses an unknown version or tenant', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'kept', graph: lineGraph() });
    const g2 = { ...lineGraph(), nodes: [{ ...lineGraph().nodes[0]!, label: 'Second' }, lineGraph().nodes[1]!] };
    await c.definitions.update(def.id, { graph: g2, version: 1 });
    const page = await c.definitions.versions(def.id);
    expect(page.items.map((v) => v.version)).toEqual([2, 1]);
    expect(page.nextCursor).toBeNull();
    const paged = await c.definitions.versions(def.id, { limit: 1 });
    expect((await c.definitions.versions(def.id, { limit: 1, cursor: paged.nextCursor! })).items.map((v) => v.version)).toEqual([1]);
    expect((await c.definitions.version(def.id, 1)).graph).toEqual(lineGraph());
    expect((await c.definitions.version(def.id, 2)).graph).toEqual(g2);
    expect(await refusal(c.definitions.version(def.id, 3))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await c.definitions.version(def.id, 1)).toMatchObject({ retiredAt: null, runs: { live: 0, parked: 0 }, unavailable: [] });
    expect(await refusal(c.definitions.retireVersion(def.id, 2))).toMatchObject({ status: 409, code: 'VersionIsLatest' });
    expect(await c.definitions.retireVersion(def.id, 1)).toBeNull();
    expect((await c.definitions.versions(def.id)).items.map((v) => v.version)).toEqual([2]);
    expect(await refusal(client(KEYS.b).definitions.versions(def.id))).toMatchObject({ status: 404, code: 'NotFound' });
  });

  it('diffs two versions member by member, and refuses an unknown version or tenant', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'diffed', graph: lineGraph() });
    const g2 = { ...lineGraph(), inputSchema: { type: 'object' }, nodes: [{ ...lineGraph().nodes[0]!, label: 'Second' }, lineGraph().nodes[1]!] };
    await c.definitions.update(def.id, { graph: g2, version: 1 });
    const d = await c.definitions.diff(def.id, 1, 2);
    expect(d).toMatchObject({ definitionId: def.id, from: 1, to: 2, identical: false, inputSchema: { changed: true, from: null, to: { type: 'object' } } });
    expect(d.nodes.changed).toEqual([{ key: 'start', kind: 'Start', changes: [{ member: 'label', from: 'start', to: 'Second' }] }]);
    expect((await c.definitions.diff(def.id, 2, 2)).identical).toBe(true);
    expect(await refusal(c.definitions.diff(def.id, 1, 3))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(client(KEYS.b).definitions.diff(def.id, 1, 2))).toMatchObject({ status: 404, code: 'NotFound' });
  });

  it('sets, lists and removes version aliases; a start runs current, a named version or an alias', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'aliased', graph: lineGraph() });
    await c.definitions.update(def.id, { graph: lineGraph({ inputSchema: { type: 'object' } }), version: 1 });
    expect(await c.definitions.setAlias(def.id, 'current', { version: 1 })).toMatchObject({ name: 'current', targets: [{ version: 1, percent: 100 }] });
    expect(await c.definitions.setAlias(def.id, 'canary', { targets: [{ version: 2, percent: 100 }] })).toMatchObject({ name: 'canary' });
    expect((await c.definitions.aliases(def.id)).items.map((a) => a.name)).toEqual(['canary', 'current']);
    const versionOf = async (body: { version?: number; alias?: string }) => (await c.runs.get((await c.runs.start(def.id, { input: {}, ...body })).runId)).run.definitionVersion;
    expect(await versionOf({})).toBe(1);
    expect(await versionOf({ alias: 'canary' })).toBe(2);
    expect(await versionOf({ version: 2 })).toBe(2);
    await c.definitions.deleteAlias(def.id, 'current');
    expect(await versionOf({})).toBe(2);
    expect(await refusal(c.definitions.setAlias(def.id, 'x', { version: 7 }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await refusal(c.definitions.deleteAlias(def.id, 'current'))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(client(KEYS.b).definitions.aliases(def.id))).toMatchObject({ status: 404, code: 'NotFound' });
  });
});

describe('migration of a live run', () => {
  it('plans a migration dry, executes it, and the run finishes on the new version', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'migrated', graph: pauseGraph() });
    const { runId } = await c.runs.start(def.id, { input: {} });
    await waitForRun(c, runId, (r) => r.run.status === 'WaitingForApproval', 'parked');
    const v2 = pauseGraph();
    v2.nodes.splice(2, 0, { key: 'after', kind: 'Tool', config: { toolName: 'echo' } } as never);
    v2.edges[1] = { key: 'e2', from: 'gate', to: 'after', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } };
    v2.edges.push({ key: 'e4', from: 'after', to: 'yes' } as never);
    await c.definitions.update(def.id, { graph: v2, version: 1 });
    const dry = await c.runs.migrate(runId, { toVersion: 2, dryRun: true });
    expect(dry).toMatchObject({ verdict: 'compatible', executed: false, fromVersion: 1, toVersion: 2 });
    expect(dry.mapping).toContainEqual({ from: null, to: 'after', kind: 'Tool', status: 'Pending', action: 'add' });
    expect(await c.runs.migrate(runId, { toVersion: 2, dryRun: false })).toMatchObject({ verdict: 'compatible', executed: true });
    await c.runs.decide(runId, 'gate', { operationId: 'go', decision: 'Approve' });
    const done = await waitForRun(c, runId, (r) => r.run.status === 'Completed', 'completed');
    expect(done.nodeRuns.find((n) => n.nodeKey === 'after')?.status).toBe('Succeeded');
    expect(await refusal(c.runs.migrate(runId, { toVersion: 7, dryRun: true }))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(client(KEYS.b).runs.migrate(runId, { toVersion: 2, dryRun: true }))).toMatchObject({ status: 404, code: 'NotFound' });
  });
});

describe('runs and gates', () => {
  it('decides a Pause with an approval policy: the answer carries its progress, the node who decided through which client', async () => {
    const me = (await client().whoami()).principal;
    const graph = pauseGraph() as { nodes: Array<{ key: string; config?: Record<string, unknown> }> };
    graph.nodes.find((n) => n.key === 'gate')!.config!.approval = { quorums: [{ name: 'ops', principals: [me], min: 1 }] };
    const def = await client().definitions.create({ name: 'policy gate', graph });
    const viaConsole = createClient({ baseUrl, apiKey: KEYS.a, fetch: recordingFetch, clientName: 'console' });
    clients.push(viaConsole);
    const { runId } = await viaConsole.runs.start(def.id, { input: { n: 1 } });
    await waitForRun(viaConsole, runId, (d) => d.run.status === 'WaitingForApproval', 'gate waiting');
    expect(await viaConsole.runs.decide(runId, 'gate', { operationId: randomUUID(), decision: 'Approve' })).toEqual({
      accepted: true, approval: { status: 'approved', quorums: [{ name: 'ops', min: 1, approvals: 1, rejections: 0, met: true }] },
    });
    await waitForRun(viaConsole, runId, (d) => d.run.status === 'Completed', 'run completed');
    const gate = await viaConsole.runs.node(runId, 'gate');
    expect(gate.approval).toMatchObject({ status: 'approved', by: 'quorum', decisions: [{ principal: me, decision: 'Approve', path: 'console' }] });

    // a named principal's signed link decides without a key
    const second = await client().runs.start(def.id, { input: { n: 2 } });
    await waitForRun(client(), second.runId, (d) => d.run.status === 'WaitingForApproval', 'second gate waiting');
    const links = (await client().runs.node(second.runId, 'gate')).approval!.links as Record<string, string>;
    expect(await client().runs.decideByLink(links[me]!, { operationId: randomUUID(), decision: 'Approve' })).toMatchObject({ accepted: true, approval: { status: 'approved' } });
    await waitForRun(client(), second.runId, (d) => d.run.status === 'Completed', 'second run completed');
  });

  it('starts idempotently by Idempotency-Key, lists, reads run and node, pages events, streams SSE, decides, and refuses RequestIdReused, DefinitionInUse and GateAlreadyDecided', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'gated', graph: pauseGraph() });
    const other = await c.definitions.create({ name: 'other', graph: lineGraph() });
    const key = `idem-${randomUUID()}`;
    const { runId } = await c.runs.start(def.id, { input: { n: 1 } }, { idempotencyKey: key });
    expect((await c.runs.start(def.id, { input: { n: 1 } }, { idempotencyKey: key })).runId).toBe(runId);
    const reused = await refusal(c.runs.start(other.id, {}, { idempotencyKey: key }));
    expect(reused).toMatchObject({ status: 409, code: 'RequestIdReused' });
    expect(await refusal(c.runs.start(randomUUID()))).toMatchObject({ status: 404, code: 'NotFound' });

    const waiting = await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'gate open');
    expect(Object.keys(waiting.run).sort()).toEqual(
      ['budget', 'conversationId', 'createdAt', 'definitionId', 'definitionVersion', 'failureClass', 'finishedAt', 'forkedFrom', 'graphHash', 'id', 'lastSeq', 'metadata', 'notBefore', 'parentRunId', 'paused', 'priority', 'reason', 'requestId', 'scheduleId', 'startedAt', 'status', 'usage'],
    );
    expect(waiting.run).toMatchObject({ id: runId, definitionId: def.id, requestId: key, paused: false, failureClass: 'None', parentRunId: null, conversationId: null });
    expect(waiting.graph).toEqual(pauseGraph());
    expect(waiting.output).toBeNull();
    expect(waiting.nodeRuns.find((n) => n.nodeKey === 'gate')).toMatchObject({ kind: 'Pause', status: 'WaitingForApproval', pendingDecisionKind: 'Approve' });

    const gate = await c.runs.node(runId, 'gate');
    expect(Object.keys(gate).sort()).toEqual(
      ['attempt', 'childRunId', 'error', 'failureClass', 'input', 'kind', 'nodeKey', 'notBefore', 'output', 'pendingDecisionKind', 'reason', 'reusedFrom', 'status', 'steering'],
    );
    expect(gate.input?.run.input).toEqual({ n: 1 });
    expect(gate.input?.upstream.start?.status).toBe('succeeded');
    expect(gate).toMatchObject({ steering: [], notBefore: null, output: null, error: null });
    expect(await refusal(c.runs.node(runId, 'nope'))).toMatchObject({ status: 404, code: 'NotFound' });

    expect(await refusal(c.definitions.delete(def.id))).toMatchObject({ status: 409, code: 'DefinitionInUse' });

    const listed = await c.runs.list({ definitionId: def.id });
    expect(listed.items.map((r) => r.id)).toEqual([runId]);
    expect((await c.runs.list({ status: 'WaitingForApproval', limit: 200 })).items.map((r) => r.id)).toContain(runId);

    expect(await c.runs.decide(runId, 'gate', { operationId: 'op-1', decision: 'Approve', comment: 'ok' })).toEqual({ accepted: true });
    expect(await c.runs.decide(runId, 'gate', { operationId: 'op-1', decision: 'Approve', comment: 'ok' })).toEqual({ accepted: true });
    const decided = await refusal(c.runs.decide(runId, 'gate', { operationId: 'op-2', decision: 'Reject' }));
    expect(decided).toMatchObject({ status: 409, code: 'GateAlreadyDecided' });

    const done = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'run completed');
    expect(done.output).toEqual({ outcome: 'approved', result: expect.anything() });
    expect(done.run.finishedAt).not.toBeNull();

    // one page is capped by EVENT_REPLAY_LIMIT (4 here); allEvents reads them all
    const page = await c.runs.events(runId, { limit: 2 });
    expect(page).toMatchObject({ limit: 2, truncated: true });
    expect(page.events.map((e) => e.seq)).toEqual([1, 2]);
    const all = await c.runs.allEvents(runId);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(all.map((e) => e.kind)).toEqual(expect.arrayContaining(['run.created', 'gate.requested', 'gate.decided', 'run.completed']));
    expect((await c.runs.allEvents(runId, 3)).map((e) => e.seq)).toEqual(all.slice(3).map((e) => e.seq));
    // a graph that keeps no state answers the empty state as of the last event, and refuses a seq past it
    expect(await c.runs.state(runId)).toEqual({ state: {}, seq: all.length });
    expect(await c.runs.state(runId, { atSeq: 1 })).toEqual({ state: {}, seq: 1 });
    expect(await refusal(c.runs.state(runId, { atSeq: all.length + 1 }))).toMatchObject({ status: 400, code: 'ValidationFailed' });

    // SSE: a terminal run's stream sends every seq and ends; Last-Event-ID resumes after it
    const frames: RunChangedPing[] = [];
    for await (const ping of c.runs.stream(runId)) frames.push(ping);
    expect(frames.map((f) => f.seq)).toEqual(all.map((e) => e.seq));
    expect(frames.every((f) => f.runId === runId && ['run', 'node', 'gate'].includes(f.kind))).toBe(true);
    const resumed: number[] = [];
    for await (const ping of c.runs.stream(runId, { lastEventId: 2 })) resumed.push(ping.seq);
    expect(resumed).toEqual(all.slice(2).map((e) => e.seq));
    expect(await refusal(c.runs.stream(randomUUID()).next())).toMatchObject({ status: 404, code: 'NotFound' });

    expect(await c.runs.cancel(runId)).toEqual({ accepted: true });
    expect((await c.runs.get(runId)).run.status).toBe('Completed');
    expect(await refusal(c.runs.get(randomUUID()))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await refusal(c.runs.get('not-an-id'))).toMatchObject({ status: 404, code: 'NotFound' });
  }, 60_000);

  it('reopens a failed run by retry, and refuses a retry of a Succeeded node with NodeStateConflict', async () => {
    const c = client();
    const def = await c.definitions.create({
      name: 'flaky',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'f', kind: 'Tool', maxAttempts: 1, config: { toolName: 'test_fail', arguments: { untilAttempt: 2 } } },
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'f' },
          { key: 'e2', from: 'f', to: 'end' },
        ],
      },
    });
    const { runId } = await c.runs.start(def.id);
    const failed = await waitForRun(c, runId, (d) => d.run.status === 'Failed', 'run failed');
    expect(failed.run.failureClass).toBe('AttemptsExhausted');
    expect((await c.runs.node(runId, 'f')).error).toMatchObject({ class: 'AttemptsExhausted' });
    expect(await c.runs.retry(runId, 'f')).toEqual({ accepted: true });
    const done = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'completed after retry');
    expect(done.nodeRuns.find((n) => n.nodeKey === 'f')).toMatchObject({ status: 'Succeeded', attempt: 2 });
    expect(await refusal(c.runs.retry(runId, 'f'))).toMatchObject({ status: 409, code: 'NodeStateConflict' });
  }, 60_000);
});

describe('operator verbs', () => {
  /** start → gate → a → b → end, gate → c → end, gate → d → end (end joins Any). */
  const graph = {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'gate', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
      { key: 'a', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { value: 'input.x' } } },
      { key: 'b', kind: 'Tool', config: { toolName: 'echo', arguments: { from: 'b' } } },
      { key: 'c', kind: 'Tool', config: { toolName: 'echo', arguments: { from: 'c' } } },
      { key: 'd', kind: 'Tool', config: { toolName: 'echo', arguments: { from: 'd' } } },
      { key: 'end', kind: 'End', joinPolicy: 'Any', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'sg', from: 'start', to: 'gate' },
      { key: 'ga', from: 'gate', to: 'a' },
      { key: 'gc', from: 'gate', to: 'c' },
      { key: 'gd', from: 'gate', to: 'd' },
      { key: 'ab', from: 'a', to: 'b' },
      { key: 'be', from: 'b', to: 'end' },
      { key: 'ce', from: 'c', to: 'end' },
      { key: 'de', from: 'd', to: 'end' },
    ],
  };

  it('signals a run: a signal sent before its Wait is reached is kept and consumed; refuses SignalUnknown, SignalPayloadInvalid and a finished run', async () => {
    const c = client();
    const signalGraph = {
      signals: { review: { schema: { type: 'object', required: ['approved'] } } },
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'hold', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
        { key: 'await', kind: 'Wait', config: { signal: 'review' } },
        { key: 'end', kind: 'End', config: { outcome: 'reviewed', resultPath: 'input.output' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'hold' },
        { key: 'e2', from: 'hold', to: 'await' },
        { key: 'e3', from: 'await', to: 'end' },
      ],
    };
    const def = await c.definitions.create({ name: 'signalled', graph: signalGraph });
    const { runId } = await c.runs.start(def.id);
    await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'gate open before the Wait');
    expect(await refusal(c.runs.signal(runId, { channel: 'nope', payload: {}, requestId: 'x' }))).toMatchObject({ status: 404, code: 'SignalUnknown' });
    expect(await refusal(c.runs.signal(runId, { channel: 'review', payload: { other: 1 }, requestId: 'y' }))).toMatchObject({ status: 422, code: 'SignalPayloadInvalid' });
    expect(await refusal(client(KEYS.b).runs.signal(runId, { channel: 'review', payload: { approved: true }, requestId: 'z' }))).toMatchObject({ status: 404, code: 'NotFound' });
    // sent while the Wait is not reached yet: kept
    const sent = await c.runs.signal(runId, { channel: 'review', payload: { approved: true }, requestId: 'r-1' });
    expect(sent).toEqual({ accepted: true, signalId: expect.any(String), duplicate: false });
    expect(await c.runs.signal(runId, { channel: 'review', payload: { approved: false }, requestId: 'r-1' })).toEqual({ ...sent, duplicate: true });
    await c.runs.decide(runId, 'hold', { operationId: randomUUID(), decision: 'Approve' });
    const done = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'run completed on the kept signal');
    expect(done.output).toMatchObject({ outcome: 'reviewed', result: { fired: 'signal', channel: 'review', payload: { approved: true } } });
    expect(await refusal(c.runs.signal(runId, { channel: 'review', payload: { approved: true }, requestId: 'r-2' }))).toMatchObject({ status: 409, code: 'RunStateConflict' });
  });

  it('pauses, steps, sets breakpoints, overrides an edge, skips, edits input, completes and resumes a run', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'operated', graph });
    const { runId } = await c.runs.start(def.id);
    await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'gate open');

    expect(await refusal(c.runs.step(runId, { mode: 'one' }))).toMatchObject({ status: 409, code: 'RunNotPaused' });
    expect(await c.runs.pause(runId)).toEqual({ accepted: true });
    expect((await c.runs.get(runId)).run.paused).toBe(true);

    expect(await refusal(c.runs.setBreakpoints(runId, ['nope']))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await c.runs.setBreakpoints(runId, ['b', 'b'])).toEqual({ nodeKeys: ['b'] });
    expect(await c.runs.setInput(runId, 'a', { x: 42 })).toEqual({ nodeKey: 'a', input: { x: 42 } });
    expect(await c.runs.skip(runId, 'c', { prune: true })).toEqual({ accepted: true });
    expect(await c.runs.overrideEdge(runId, 'gd', false)).toEqual({ edgeKey: 'gd', verdict: false });
    expect(await refusal(c.runs.overrideEdge(runId, 'nope', true))).toMatchObject({ status: 404, code: 'NotFound' });
    // the controls read back what was set (the console's breakpoint and override toggles read them)
    expect(await c.runs.controls(runId)).toEqual({ paused: true, breakpoints: ['b'], edgeOverrides: { gd: false }, step: null });
    expect(await refusal(client(KEYS.b).runs.controls(runId))).toMatchObject({ status: 404, code: 'NotFound' });
    // why it is not moving: the gate waits for a person
    const why = await c.runs.blockers(runId);
    expect(why.blockers.find((b) => b.nodeKey === 'gate')).toMatchObject({ kind: 'gate', details: { decisionKind: 'Approve' } });
    expect(await refusal(client(KEYS.b).runs.blockers(runId))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await c.runs.complete(runId, 'b', { by: 'operator' }, { idempotencyKey: randomUUID() })).toEqual({ accepted: true });
    expect(await refusal(c.runs.complete(runId, 'gate', {}))).toMatchObject({ status: 409, code: 'NodeStateConflict' });
    expect(await c.runs.decide(runId, 'gate', { operationId: randomUUID(), decision: 'Approve' })).toEqual({ accepted: true });

    // paused: nothing new is admitted until a step allows `a`
    await waitForRun(c, runId, (d) => nodeStatus(d, 'gate') === 'Succeeded' && nodeStatus(d, 'b') === 'Succeeded', 'gate decided, b completed');
    const step = await c.runs.step(runId, { mode: 'node', nodeKey: 'a' });
    expect(step).toMatchObject({ accepted: true, stepId: expect.any(String), coalesced: false });
    await waitForRun(c, runId, (d) => nodeStatus(d, 'a') === 'Succeeded', 'a stepped');
    expect((await c.runs.node(runId, 'a')).output?.output).toEqual({ result: { value: 42 } });
    expect((await c.runs.node(runId, 'b')).output?.output).toEqual({ by: 'operator' });

    expect(await c.runs.setBreakpoints(runId, [])).toEqual({ nodeKeys: [] });
    expect(await c.runs.resume(runId)).toEqual({ accepted: true });
    const done = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'run completed');
    expect(done.run.paused).toBe(false);
    expect(nodeStatus(done, 'c')).toBe('Skipped');
    expect(nodeStatus(done, 'd')).toBe('Skipped');
    const kinds = (await c.runs.allEvents(runId)).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['run.paused', 'run.resumed', 'node.overridden']));
    expect(await refusal(c.runs.pause(runId))).toMatchObject({ status: 409, code: 'RunStateConflict' });
    expect(await refusal(c.runs.skip(runId, 'a'))).toMatchObject({ status: 409, code: 'NodeStateConflict' });

    // a new run from `a` of the finished run, idempotent on the key; refusals surface with their codes
    const forkKey = randomUUID();
    const forked = await c.runs.fork(runId, { fromNodeKey: 'a', input: { x: 7 } }, { idempotencyKey: forkKey });
    expect(forked).toEqual({ runId: expect.any(String), forkedFrom: { runId, nodeKey: 'a' } });
    expect(await c.runs.fork(runId, { fromNodeKey: 'a' }, { idempotencyKey: forkKey })).toEqual(forked);
    expect((await c.runs.get(forked.runId)).run.forkedFrom).toEqual({ runId, nodeKey: 'a' });
    expect(await refusal(c.runs.fork(runId, { fromNodeKey: 'nope' }))).toMatchObject({ status: 400, code: 'ForkNodeUnknown' });
    expect(await refusal(client(KEYS.b).runs.fork(runId, { fromNodeKey: 'a' }))).toMatchObject({ status: 404, code: 'NotFound' });
    await c.runs.cancel(forked.runId);
    expect(await refusal(c.runs.setInput(runId, 'a', {}))).toMatchObject({ status: 409, code: 'NodeStateConflict' });

    // metadata at start, search by it, and a bulk action by filter (dry run, then a job whose progress is read)
    const tag = randomUUID().slice(0, 8);
    const tagged = await c.runs.start(def.id, { input: {}, metadata: { tag } });
    expect((await c.runs.get(tagged.runId)).run.metadata).toEqual({ tag });
    const found = await c.runs.list({ metadata: { tag }, status: ['Pending', 'Running', 'WaitingForApproval', 'Completed'] });
    expect(found.items.map((r) => r.id)).toEqual([tagged.runId]);
    expect((await c.runs.list({ metadata: [`tag:${tag}`], definitionVersion: 1, createdAfter: '2000-01-01T00:00:00Z' })).items).toHaveLength(1);
    // free text: the whole id, a prefix of it, the metadata pair as key:value
    expect((await c.runs.list({ q: tagged.runId })).items.map((r) => r.id)).toEqual([tagged.runId]);
    expect((await c.runs.list({ q: tagged.runId.slice(0, 8) })).items.map((r) => r.id)).toContain(tagged.runId);
    expect((await c.runs.list({ q: `tag:${tag}` })).items.map((r) => r.id)).toEqual([tagged.runId]);
    expect(await refusal(c.runs.list({ q: ' ' }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await refusal(c.runs.list({ failureClass: 'Oops' as never }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await c.runs.bulk({ action: 'fork', filter: { metadata: { tag } }, fromNodeKey: 'a', dryRun: true })).toEqual({ count: 1 });
    const job = await c.runs.bulk({ action: 'cancel', filter: { metadata: { tag }, status: ['Completed'] } }, { idempotencyKey: tag });
    expect(job).toEqual({ bulkId: expect.any(String), count: expect.any(Number) });
    expect(await c.runs.bulkProgress(job.bulkId)).toMatchObject({ bulkId: job.bulkId, action: 'cancel', total: job.count });
    expect(await refusal(client(KEYS.b).runs.bulkProgress(job.bulkId))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await c.runs.bulkRuns(job.bulkId, { outcome: 'refused', limit: 10 })).toEqual({ items: [], nextCursor: null });
    expect(await refusal(c.runs.bulkResume(job.bulkId))).toMatchObject({ status: 409, code: 'BulkJobNotPaused' });
    expect(await refusal(c.runs.bulk({ action: 'migrate', filter: { metadata: { tag } }, toVersion: 1 }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await refusal(c.runs.bulk({ action: 'cancel', filter: {} }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    await c.runs.cancel(tagged.runId);
  }, 60_000);

  it('steers a queued LlmCall, streams its activity, unsubscribes, and cancels the run', async () => {
    const c = client();
    const def = await c.definitions.create({
      name: 'llm',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          { key: 'llm', kind: 'LlmCall', config: { prompt: 'hello' } },
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          { key: 'e1', from: 'start', to: 'llm' },
          { key: 'e2', from: 'llm', to: 'end' },
        ],
      },
    });
    const { runId } = await c.runs.start(def.id);
    // no LLM worker consumes this file's lane: the node stays Queued
    await waitForRun(c, runId, (d) => nodeStatus(d, 'llm') === 'Queued', 'llm queued');

    expect(await c.runs.steer(runId, 'llm', { operationId: 'steer-1', message: 'be brief' })).toEqual({ accepted: true });
    expect(await c.runs.steer(runId, 'llm', { operationId: 'steer-1', message: 'be brief' })).toEqual({ accepted: true });
    expect(await refusal(c.runs.steer(runId, 'llm', { operationId: 'steer-1', message: 'other' }))).toMatchObject({ status: 409, code: 'OperationIdReused' });
    expect(await refusal(c.runs.steer(runId, 'start', { operationId: 'steer-2', message: 'x' }))).toMatchObject({ status: 409, code: 'NodeStateConflict' });
    const steered = await c.runs.node(runId, 'llm');
    expect(steered.steering).toEqual([{ operationId: 'steer-1', message: 'be brief', atUtc: expect.any(String), attempt: expect.any(Number), applied: expect.any(Boolean) }]);

    // live: subscribe, then an activity feed of the node once it reads Running
    const changes: RunChange[] = [];
    const sub = c.subscribeRun(runId, 0, (ch) => changes.push(ch));
    const snapshot = await sub.ready;
    expect(snapshot).toMatchObject({ status: 'Running', queued: 1, running: 0 });
    // from the latest seq: no replay, the watermark is the run's last seq
    const before = (await c.runs.allEvents(runId)).at(-1)!.seq;
    const fromLatest = c.subscribeRun(runId, 'latest', () => undefined);
    expect((await fromLatest.ready).events).toEqual([]);
    expect(fromLatest.watermark()).toBeGreaterThanOrEqual(before);
    expect(fromLatest.watermark()).toBeLessThanOrEqual((await c.runs.allEvents(runId)).at(-1)!.seq);
    await fromLatest.close();
    await expect(c.streamNodeActivity(runId, 'llm', () => undefined)).rejects.toMatchObject({ code: 'NodeStateConflict' });
    // what a worker's job start reports, keeping the invocation the dispatcher queued
    const flipped = await db.pool.query<{ invocation_id: string }>(
      `UPDATE node_runs SET status = 'Running', invocation_id = coalesce(invocation_id, $2) WHERE run_id = $1 AND node_key = 'llm' RETURNING invocation_id`,
      [runId, randomUUID()],
    );
    const invocationId = flipped.rows[0]!.invocation_id;
    const key = activityStreamKey(invocationId, tr.prefix);
    await apiRedis.xadd(key, '*', 'type', 'content', 'text', 'Hel');
    const got: NodeActivity[] = [];
    const feed = await c.streamNodeActivity(runId, 'llm', (a) => got.push(a));
    expect(feed.invocationId).toBe(invocationId);
    await apiRedis.xadd(key, '*', 'type', 'content', 'text', 'lo');
    await waitFor(() => got.length === 2, { description: 'activity' });
    expect(got).toEqual([
      { runId, nodeKey: 'llm', invocationId, type: 'content', offset: 0, text: 'Hel' },
      { runId, nodeKey: 'llm', invocationId, type: 'content', offset: 1, text: 'lo' },
    ]);
    feed.stop();

    const room = () => live.io.in(runRoom(runId)).fetchSockets();
    expect(await room()).toHaveLength(1);
    await c.unsubscribeRun(runId);
    expect(await room()).toHaveLength(0);
    await expect(sub.ready).resolves.toMatchObject({ status: 'Running' });

    expect(await c.runs.cancel(runId, { reason: 'client test' })).toEqual({ accepted: true });
    expect(await c.runs.cancel(runId)).toEqual({ accepted: true });
    await waitForRun(c, runId, (d) => d.run.status === 'Cancelled', 'run cancelled');
    expect(await refusal(c.runs.steer(runId, 'llm', { operationId: 'steer-3', message: 'late' }))).toMatchObject({ status: 409 });
  }, 60_000);
});

describe('agent transcript', () => {
  it("reads an Agent node's transcript page by page", async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'agent-steps', graph: agentGraph({ instructions: 'look it up', tools: ['echo'] }) });
    const { runId } = await c.runs.start(def.id);
    // no LLM worker consumes this file's lane: the steps are written as the worker's transcript writes them
    await waitForRun(c, runId, (d) => nodeStatus(d, 'agent') === 'Queued', 'agent queued');
    expect(await c.runs.agentSteps(runId, 'agent')).toEqual({ items: [], nextCursor: null });
    await appendAgentStep(db.pool, runId, 'agent', { step: 1, generation: 1, attempt: 1, kind: 'model', payload: { text: '', toolCalls: [] } });
    await appendAgentStep(db.pool, runId, 'agent', { step: 2, generation: 1, attempt: 1, kind: 'tool', payload: { callId: 'c1', name: 'echo', ok: true, content: 'echoed' } });
    const first = await c.runs.agentSteps(runId, 'agent', { limit: 1 });
    expect(first.items).toEqual([{ step: 1, generation: 1, attempt: 1, kind: 'model', payload: { text: '', toolCalls: [] }, createdAt: expect.any(String) }]);
    const rest = await c.runs.agentSteps(runId, 'agent', { cursor: first.nextCursor! });
    expect(rest).toEqual({ items: [expect.objectContaining({ step: 2, kind: 'tool', payload: expect.objectContaining({ content: 'echoed' }) })], nextCursor: null });
    expect(await refusal(c.runs.agentSteps(runId, 'nope'))).toMatchObject({ status: 404, code: 'NotFound' });
    await c.runs.cancel(runId);
  }, 60_000);
});

describe('live connection', () => {
  it('reconnects after the server closes its socket (a replica draining for a deploy) and re-subscribes from its watermark', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'live-reconnect', graph: pauseGraph() });
    const { runId } = await c.runs.start(def.id);
    await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'gate open');
    const changes: RunChange[] = [];
    const sub = c.subscribeRun(runId, 0, (ch) => changes.push(ch));
    await sub.ready;
    const { socket } = c.live();
    expect(c.live().state()).toBe('connected');
    const before = sub.watermark();

    // what a replica's shutdown does to its own sockets; Socket.IO alone would not come back
    const states: string[] = [];
    socket.once('disconnect', (reason) => states.push(`${reason}: ${c.live().state()}`));
    live.io.local.disconnectSockets(true);
    await waitFor(() => states.length > 0, { timeoutMs: 5_000, description: 'disconnected by the server' });
    expect(states).toEqual(['io server disconnect: reconnecting']);
    await waitFor(() => c.live().state() === 'connected', { timeoutMs: 5_000, description: 'reconnected' });
    // re-subscribed from its watermark: a second snapshot, replaying nothing it had
    await waitFor(() => changes.filter((ch) => ch.snapshot).length === 2, { timeoutMs: 5_000, description: 'second snapshot' });
    expect(changes.filter((ch) => ch.snapshot).at(-1)!.events.every((e) => e.seq > before)).toBe(true);

    // and it follows the run again: the decision's events arrive past the watermark
    await c.runs.decide(runId, 'gate', { operationId: randomUUID(), decision: 'Approve' });
    await waitFor(() => changes.some((ch) => ch.events.some((e) => e.kind === 'run.completed')), { timeoutMs: 10_000, description: 'run.completed delivered live' });
    expect(sub.watermark()).toBeGreaterThan(before);
    await sub.close();
  });
});

describe('conversations', () => {
  it('sends a message, refuses a second send while the run is live (RunBusy), lists messages and runs, and answers the ChatInput', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'chat', graph: chatGraph() });
    const conv = `conv-${randomUUID()}`;
    const sent = await c.conversations.send(conv, { definitionId: def.id, text: 'hi', requestId: 'm-1' });
    expect(sent).toEqual({ runId: expect.any(String), messageId: expect.any(String), action: 'started' });
    // the same send again: the same run and message, the action says it was a replay
    expect(await c.conversations.send(conv, { definitionId: def.id, text: 'hi', requestId: 'm-1' })).toEqual({ ...sent, action: 'replayed' });
    const busy = await refusal(c.conversations.send(conv, { definitionId: def.id, text: 'again', requestId: 'm-2' }));
    expect(busy).toMatchObject({ status: 409, code: 'RunBusy' });

    const messages = await c.conversations.messages(conv);
    expect(messages.items).toEqual([
      { id: sent.messageId, role: 'user', text: 'hi', attachments: [], runId: sent.runId, nodeKey: null, createdAt: expect.any(String) },
    ]);
    const runs = await c.conversations.runs(conv, { limit: 10 });
    expect(runs.items.map((r) => [r.id, r.conversationId])).toEqual([[sent.runId, conv]]);
    expect(await refusal(c.conversations.messages(`none-${randomUUID()}`))).toMatchObject({ status: 404, code: 'NotFound' });
    expect((await c.conversations.list()).items.some((x) => x.boundRunId === sent.runId)).toBe(true);

    await waitForRun(c, sent.runId, (d) => nodeStatus(d, 'ask') === 'WaitingForApproval', 'chat input open');
    expect((await c.runs.get(sent.runId)).nodeRuns.find((n) => n.nodeKey === 'ask')?.pendingDecisionKind).toBe('Answer');
    await c.runs.decide(sent.runId, 'ask', { operationId: randomUUID(), decision: 'Answer', payload: { text: 'hello' } });
    await waitForRun(c, sent.runId, (d) => d.run.status === 'Completed', 'chat run completed');
    // purged: the messages go, the run stays, unbound
    expect(await c.conversations.purge(conv)).toBeNull();
    expect(await refusal(c.conversations.messages(conv))).toMatchObject({ status: 404, code: 'NotFound' });
    expect((await c.runs.get(sent.runId)).run.conversationId).toBeNull();
  }, 60_000);
});

describe('files', () => {
  it('uploads a file, reads its metadata back, refuses another tenant with NotFound, and sends it as an attachment', async () => {
    const c = client();
    const stored = await c.files.upload(new Blob(['a note'], { type: 'text/plain' }), 'note.txt');
    expect(stored).toEqual({
      fileId: expect.any(String),
      name: 'note.txt',
      bytes: 6,
      sha256: createHash('sha256').update('a note').digest('hex'),
      contentType: 'text/plain',
      kind: 'text',
    });
    expect(await c.files.get(stored.fileId)).toEqual(stored);
    expect(await refusal(client(KEYS.b).files.get(stored.fileId))).toMatchObject({ status: 404, code: 'NotFound' });
    const def = await c.definitions.create({ name: 'chat-files', graph: { ...chatGraph(), chat: { acceptsAttachments: true } } });
    const attachment = { fileId: stored.fileId, name: stored.name, kind: stored.kind, bytes: stored.bytes };
    const sent = await c.conversations.send(`conv-${randomUUID()}`, { definitionId: def.id, text: 'see file', requestId: 'f-1', attachments: [attachment] });
    expect(sent.runId).toEqual(expect.any(String));
  });
});

describe('mcp servers', () => {
  it('registers, reads by id and name, replaces keeping headers, and deletes an MCP server; never shows header values', async () => {
    const c = client();
    const body = { name: 'client-docs', url: 'https://mcp.example/mcp', transport: 'streamable-http' as const, headers: { authorization: 'Bearer s3cret' } };
    const made = await c.mcpServers.create(body);
    expect(made).toMatchObject({ name: 'client-docs', headerNames: ['authorization'], allowedTools: null, version: 1 });
    expect(JSON.stringify(await c.mcpServers.list())).not.toContain('s3cret');
    expect(await c.mcpServers.get(made.id)).toEqual(made);
    expect(await c.mcpServers.get('client-docs')).toEqual(made);
    expect(await refusal(c.mcpServers.create(body))).toMatchObject({ status: 409, code: 'McpServerNameTaken' });
    const { headers: _kept, ...rest } = body;
    expect(await c.mcpServers.update('client-docs', { ...rest, allowedTools: ['search'] })).toMatchObject({ headerNames: ['authorization'], allowedTools: ['search'], version: 2 });
    expect(await refusal(client(KEYS.b).mcpServers.get(made.id))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await c.mcpServers.delete(made.id)).toBeNull();
    expect((await c.mcpServers.list()).items.map((s) => s.name)).not.toContain('client-docs');
    await c.mcpServers.create({ ...body, name: 'client-far' });
    // the test API reads no listings: the connection test answers the server cannot be listed
    expect(await refusal(c.mcpServers.tools('client-far'))).toMatchObject({ status: 502, code: 'McpServerUnreachable' });
  });

  it('saves agents with versions, reads each version, and deletes them', async () => {
    const c = client();
    const body = { name: 'client-agent', instructions: 'Answer briefly.', tools: ['echo'], maxIterations: 3 };
    const made = await c.agents.create(body);
    expect(made).toMatchObject({ ...body, version: 1, latestVersion: 1, toolApprovals: [] });
    expect(await refusal(c.agents.create(body))).toMatchObject({ status: 409, code: 'AgentNameTaken' });
    const next = await c.agents.update(made.id, { ...body, instructions: 'Answer at length.', toolApprovals: ['echo'] });
    expect(next).toMatchObject({ version: 2, toolApprovals: ['echo'] });
    expect(await c.agents.get(made.id, 1)).toMatchObject({ version: 1, instructions: 'Answer briefly.' });
    expect(await c.agents.version(made.id, 2)).toEqual(await c.agents.get(made.id));
    expect((await c.agents.versions(made.id)).items.map((v) => v.version)).toEqual([2, 1]);
    expect((await c.agents.list()).items.map((a) => a.name)).toContain('client-agent');
    expect(await c.agents.delete(made.id)).toBeNull();
    expect(await refusal(c.agents.get(made.id))).toMatchObject({ status: 404, code: 'NotFound' });
  });
});

describe('delayed starts and schedules', () => {
  it('starts a run later (Scheduled), moves it, and the dispatcher releases it at the new time; 409 once it left Scheduled', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'later', graph: lineGraph() });
    const { runId } = await c.runs.start(def.id, { delay: 'PT1H' });
    expect((await c.runs.get(runId)).run).toMatchObject({ status: 'Scheduled', startedAt: null });
    const at = new Date(Date.now() + 400).toISOString();
    expect(await c.runs.reschedule(runId, { startAt: at })).toEqual({ runId, notBefore: at });
    const done = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'released at its new time');
    expect(done.run.notBefore).toBe(at);
    expect(await refusal(c.runs.reschedule(runId, { delay: 'PT1M' }))).toMatchObject({ status: 409, code: 'RunStateConflict' });
  });

  it('upserts, reads, lists, previews, triggers, backfills, pauses, resumes, replaces, reads the ledger and deletes a schedule', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'scheduled', graph: lineGraph() });
    const body = { key: 'client-nightly', definitionId: def.id, spec: { cron: '30 2 * * *', timezone: 'America/New_York' } };
    const made = await c.schedules.upsert(body);
    expect(made).toMatchObject({ key: 'client-nightly', version: 'current', paused: false, policy: { overlap: 'skip' } });
    expect((await c.schedules.upsert({ ...body, policy: { overlap: 'allowAll' } })).id).toBe(made.id);
    expect(await c.schedules.get(made.id)).toMatchObject({ policy: { overlap: 'allowAll' }, revision: 2 });
    expect((await c.schedules.list()).items.map((s) => s.id)).toContain(made.id);
    const preview = await c.schedules.preview(made.id, 3);
    expect(preview.slots).toHaveLength(3);
    expect(preview.slots[0]!.utcOffset).toMatch(/^-0[45]:00$/);
    const t = await c.schedules.trigger(made.id);
    await waitForRun(c, t.runId, (d) => d.run.status === 'Completed', 'the triggered run');
    const bf = await c.schedules.backfill(made.id, { from: '2026-01-01T00:00:00Z', to: '2026-01-02T12:00:00Z', dryRun: true });
    expect(bf.slots.map((x) => x.slotAt)).toEqual(['2026-01-01T07:30:00.000Z', '2026-01-02T07:30:00.000Z']);
    expect((await c.schedules.pause(made.id, { reason: 'freeze' })).pausedReason).toBe('freeze');
    expect((await c.schedules.resume(made.id)).paused).toBe(false);
    expect((await c.schedules.replace(made.id, { ...body, key: 'client-renamed' })).key).toBe('client-renamed');
    expect((await c.schedules.slots(made.id)).items).toMatchObject([{ source: 'trigger', outcome: 'started', runId: t.runId }]);
    expect(await refusal(c.schedules.upsert({ ...body, spec: { cron: 'every day' } }))).toMatchObject({ status: 400, code: 'ValidationFailed' });
    expect(await refusal(client(KEYS.b).schedules.get(made.id))).toMatchObject({ status: 404, code: 'NotFound' });
    expect(await c.schedules.delete(made.id)).toBeNull();
  });
});

describe('waitpoints and events', () => {
  const parkedToken = async (c: FlowlineClient, defId: string) => {
    const { runId } = await c.runs.start(defId);
    await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'parked on its token');
    const [wp] = (await c.runs.node(runId, 'w')).waitpoints!;
    return { runId, wp: wp! };
  };

  it('completes a token through its callback URL and with a key, revokes one, lists them, and sends events a Wait takes', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'tokened', graph: waitGraph({ token: { timeout: 'PT1H', schema: { type: 'object', required: ['paid'] } } }) });
    const one = await parkedToken(c, def.id);
    expect(await refusal(c.waitpoints.callback(one.wp.callbackUrl, { nope: 1 }))).toMatchObject({ status: 422, code: 'WaitpointPayloadInvalid' });
    expect(await c.waitpoints.callback(one.wp.callbackUrl, { paid: true })).toEqual({ completed: true, alreadyCompleted: false, waitpointId: one.wp.id });
    expect(await c.waitpoints.callback(one.wp.callbackUrl, { paid: false })).toMatchObject({ alreadyCompleted: true });
    const done = await waitForRun(c, one.runId, (d) => d.run.status === 'Completed', 'fired on the callback');
    expect(done.output).toMatchObject({ result: { fired: 'token', payload: { paid: true } } });

    const two = await parkedToken(c, def.id);
    expect(await c.waitpoints.get(two.wp.id)).toMatchObject({ id: two.wp.id, status: 'waiting', callbackUrl: two.wp.callbackUrl });
    expect(await c.waitpoints.complete(two.wp.id, { paid: 1 })).toMatchObject({ completed: true, waitpoint: { status: 'completed' } });
    expect((await c.waitpoints.list({ runId: two.runId })).items.map((w) => w.id)).toEqual([two.wp.id]);

    const three = await parkedToken(c, def.id);
    expect(await c.waitpoints.revoke(three.wp.id)).toMatchObject({ status: 'revoked' });
    expect(await refusal(c.waitpoints.callback(three.wp.callbackUrl, { paid: true }))).toMatchObject({ status: 410, code: 'WaitpointRevoked' });
    await waitForRun(c, three.runId, (d) => d.run.status === 'Completed', 'fired on the revocation');

    const evDef = await c.definitions.create({ name: 'evented', graph: waitGraph({ event: 'order.paid', filter: { path: 'data.n', op: 'Eq', value: 2 } }) });
    const { runId } = await c.runs.start(evDef.id);
    await waitForRun(c, runId, (d) => d.run.status === 'WaitingForApproval', 'parked on its event');
    expect(await c.events.send([{ name: 'order.paid', id: 'c-1', data: { n: 1 } }, { name: 'order.paid', id: 'c-2', data: { n: 2 } }])).toEqual({ accepted: 2, ids: ['c-1', 'c-2'], duplicates: [] });
    const evDone = await waitForRun(c, runId, (d) => d.run.status === 'Completed', 'fired on the event');
    expect(evDone.output).toMatchObject({ result: { fired: 'event', eventId: 'c-2', payload: { n: 2 } } });
    // the list: newest first (received in one request: the id breaks the tie), paged by its cursor
    const first = await c.events.list({ name: 'order.paid', limit: 1 });
    expect(first.items.map((e) => e.id)).toEqual(['c-2']);
    expect(first.items[0]).toMatchObject({ name: 'order.paid', fanout: 'done', outcomes: {} });
    expect((await c.events.list({ name: 'order.paid', limit: 1, cursor: first.nextCursor! })).items.map((e) => e.id)).toEqual(['c-1']);
    expect((await c.events.list({ name: 'order.paid', to: '2000-01-01T00:00:00Z' })).items).toEqual([]);

    // a definition published after the event: a replay starts its one run
    const late = await c.definitions.create({ name: 'triggered', graph: lineGraph({ triggers: [{ event: 'order.*' }] }) });
    expect((await c.events.get('c-1')).matches).toEqual([]);
    const replayed = await c.events.replay('c-1', [late.id]);
    expect(replayed.matches).toEqual([{ definitionId: late.id, outcome: 'matched', reason: null, runId: expect.any(String) }]);
    expect((await c.events.get('c-1')).matches).toMatchObject([{ definitionId: late.id, definitionName: 'triggered', outcome: 'matched', runId: replayed.matches[0]!.runId }]);

    // a webhook: bearer-verified deliveries start runs of the definition; the log and a replay
    const hook = await c.webhooks.create({ slug: 'client-hook', target: { definitionId: late.id }, auth: { type: 'bearer' } });
    expect(hook.secret).toEqual(expect.any(String));
    const delivered = await c.webhooks.deliver(hook.url, { n: 1 }, { authorization: `Bearer ${hook.secret}` });
    expect(delivered.runId).toEqual(expect.any(String));
    expect((await c.webhooks.list()).items.map((x) => x.slug)).toContain('client-hook');
    expect((await c.webhooks.get(hook.id)).auth.secrets).toEqual([{ id: 'primary', notAfter: null }]);
    const [d] = (await c.webhooks.deliveries(hook.id)).items;
    expect(d).toMatchObject({ verdict: 'verified', runId: delivered.runId });
    expect(await c.webhooks.replay(hook.id, d!.id)).toMatchObject({ verdict: 'duplicate', runId: delivered.runId });
    expect((await c.webhooks.update(hook.id, { slug: 'client-hook', target: { definitionId: late.id }, auth: { type: 'none' } })).version).toBe(2);
    await c.webhooks.delete(hook.id);
    expect(await refusal(c.webhooks.get(hook.id))).toMatchObject({ status: 404 });
  });
});

describe('audit log', () => {
  it('lists, exports and verifies the tenant’s audit rows', async () => {
    const c = client();
    const def = await c.definitions.create({ name: 'client-audited', graph: lineGraph() });
    const page = await c.audit.list({ action: 'definition.create', resource: `definition:${def.id}` });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ action: 'definition.create', resourceId: def.id, status: 201, principal: (await c.whoami()).principal });
    const pending = await c.audit.list({ limit: 1, pending: true });
    expect(pending.items.length).toBeGreaterThanOrEqual(1);
    const exported = await c.audit.export({ action: 'definition.*' });
    expect(exported.map((r) => r.resourceId)).toContain(def.id);
    expect(exported.every((r) => r.action.startsWith('definition.'))).toBe(true);
    expect(await c.audit.verify()).toMatchObject({ ok: true, brokenAt: null });
  });
});

describe('managed API keys', () => {
  it('mints a key (its secret once), acts with it, lists and reads it without the secret, rotates and revokes it', async () => {
    const c = client();
    const minted = await c.apiKeys.create({ name: 'client key', scopes: ['read'] });
    expect(minted.secret).toMatch(/^fl_tenantA_/);
    const asKey = client(minted.secret);
    expect(await asKey.whoami()).toMatchObject({ principal: `service:${minted.id}`, keyId: minted.id, scopes: ['read'] });
    expect(JSON.stringify((await c.apiKeys.list()).items)).not.toContain(minted.secret);
    expect(await c.apiKeys.get(minted.id)).toMatchObject({ id: minted.id, lastFour: minted.secret.slice(-4), revokedAt: null });
    expect(await refusal(c.apiKeys.create({ name: 'wider', scopes: ['admin'] }))).toMatchObject({ status: 403, code: 'ScopeEscalation' });
    const rotated = await c.apiKeys.rotate(minted.id, 0);
    expect(await refusal(asKey.whoami())).toMatchObject({ status: 401 });
    expect((await client(rotated.secret).whoami()).keyId).toBe(minted.id);
    await c.apiKeys.revoke(minted.id);
    expect(await refusal(client(rotated.secret).whoami())).toMatchObject({ status: 401 });
    expect((await c.apiKeys.get(minted.id)).revokedAt).not.toBeNull();
  });
});

describe('coverage', () => {
  it('reached every route of the OpenAPI document through the client', async () => {
    const doc = await client().ops.openApi();
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));
    const pattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const literal = (path: string) => path.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
    const reached = new Set<string>();
    for (const r of requests) {
      const [method, path] = r.split(' ') as [string, string];
      // the most literal template wins (`/v1/definitions/validate` over `/v1/definitions/{id}`)
      const match = routes
        .filter((x) => x.method === method && pattern(x.path).test(path))
        .sort((x, y) => literal(y.path) - literal(x.path))[0];
      if (match) reached.add(`${match.method} ${match.path}`);
    }
    const missing = routes.map((x) => `${x.method} ${x.path}`).filter((x) => !reached.has(x));
    expect(routes.length).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });
});
