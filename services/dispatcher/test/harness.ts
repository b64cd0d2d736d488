/**
 * In-process cluster for integration tests: a migrated database of its own, a unique
 * BullMQ prefix, dispatchers built exactly as main.ts builds them, and runs created
 * through the same store function the API uses. The tests that also run the real tool
 * worker in this process cross two services and live in tests/integration/.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createRun, insertDefinition } from '@flowline/db';
import { concurrencyKeyOf, stringifyJson, type Graph, type GraphNode, type GraphEdge, type EdgeCondition, type JsonObject } from '@flowline/graph';
import { publishWake } from '@flowline/queue';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@flowline/testing';
import { createDispatcher, type Dispatcher, type DispatcherDeps } from '../src/dispatcher';
import { dispatcherConfigSchema, type DispatcherConfig } from '../src/config';

export const TENANT = 'default';
export const SHARD_COUNT = 8;

export interface Harness {
  db: TestDatabase;
  redis: TestRedis;
  /** shared command connection (queues, publishes) */
  conn: Redis;
  startDispatcher(id: string, overrides?: Partial<Record<keyof DispatcherConfig, string>>, deps?: Pick<DispatcherDeps, 'metrics'>): Promise<Dispatcher>;
  /**
   * Creates a definition of `graph` and one run per input, all of `tenantId` (default
   * {@link TENANT}), each with `priority[i]` (default 3) when given.
   */
  createRuns(graph: Graph, inputs: JsonObject[], tenantId?: string, priority?: readonly number[], extra?: { notBefore?: number; versionAlias?: string }): Promise<string[]>;
  close(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const redis = createTestRedis();
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  const dispatchers: Dispatcher[] = [];
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' });

  return {
    db,
    redis,
    conn,
    async startDispatcher(id, overrides = {}, extra = {}) {
      const config = dispatcherConfigSchema.parse({
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.prefix,
        DISPATCHER_ID: id,
        SHARD_COUNT: String(SHARD_COUNT),
        SHARD_LEASE_MS: '1500',
        DISPATCH_SWEEP_MS: '100',
        INFLIGHT_CHECK_EVERY_SWEEPS: '5',
        MAX_CONCURRENT_RUNS: '1000',
        ...overrides,
      });
      const d = createDispatcher({ config, pool: db.pool, redis: conn, log, ...extra });
      dispatchers.push(d);
      await d.start();
      return d;
    },
    async createRuns(graph, inputs, tenantId = TENANT, priority = [], extra = {}) {
      const definitionId = randomUUID();
      const doc = stringifyJson(graph);
      await insertDefinition(db.pool, {
        id: definitionId,
        tenantId,
        name: `test-${definitionId}`,
        description: null,
        kind: graph.kind,
        graphJson: doc,
        planGraphJson: doc,
        graphHash: definitionId,
        nodeCount: graph.nodes.length,
      });
      const ids: string[] = [];
      for (const [i, input] of inputs.entries()) {
        const r = await createRun(db.pool, {
          tenantId,
          ...(priority[i] !== undefined ? { priority: priority[i] } : {}),
          definitionId,
          requestId: null,
          conversationId: null,
          shardCount: SHARD_COUNT,
          ...extra,
          prepare: () => ({
            inputJson: stringifyJson(input),
            nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
            concurrency: concurrencyKeyOf(graph, input),
          }),
        });
        if (r.kind !== 'created') throw new Error(`run not created: ${r.kind}`);
        ids.push(r.runId);
      }
      // As the API does after its commit: the signal saves a sweep interval.
      for (const runId of ids) await publishWake(conn, { runId }, redis.prefix, SHARD_COUNT);
      return ids;
    },
    async close() {
      await Promise.allSettled(dispatchers.map((d) => d.stop()));
      conn.disconnect();
      await redis.cleanup().catch(() => undefined);
      await db.drop();
    },
  };
}

/** A graph node as the parser would model it (join All, fail-run, fast backoff). */
export const node = (key: string, kind: GraphNode['kind'], config: JsonObject, maxAttempts = 1): GraphNode => ({
  key,
  kind,
  label: key,
  joinPolicy: 'All',
  maxAttempts,
  timeoutSeconds: null,
  retryBackoff: { initialMs: 50, multiplier: 2, maxMs: 200 },
  onError: 'FailRun',
  inputSchema: null,
  outputSchema: null,
  position: null,
  config,
});

/** An unconditional edge. */
export const edge = (from: string, to: string): GraphEdge => ({
  key: `${from}-${to}`,
  from,
  to,
  label: null,
  condition: null,
  default: false,
});

/** A Standard graph of these nodes and edges, without schemas, as the parser would model it. */
export function graphOf(nodes: GraphNode[], edges: GraphEdge[]): Graph {
  return { schemaVersion: 1, kind: 'Standard', chat: null, inputSchema: null, outputSchema: null, nodes, edges };
}

/** Start → Tool(`toolName`, arguments) → End, as the parser would model it. */
export function toolChain(toolName = 'echo', args: JsonObject = { hello: 'world' }): Graph {
  return graphOf(
    [node('start', 'Start', {}), node('tool', 'Tool', { toolName, arguments: args }, 3), node('end', 'End', { outcome: 'done' })],
    [edge('start', 'tool'), edge('tool', 'end')],
  );
}

/**
 * Start → Condition → Tool(echo of `run.input.<member>`) → End `gt` (its result the echo)
 * when `output.input.<member> Gt value`, else → End `lte`: a route one input member decides.
 */
export function routeOnInput(member: string, value: EdgeCondition['value']): Graph {
  const on = (from: string, to: string, op: 'Gt' | 'Lte'): GraphEdge => ({ ...edge(from, to), condition: { path: `output.input.${member}`, op, value } });
  return graphOf(
    [
      node('start', 'Start', {}),
      node('cond', 'Condition', {}),
      node('tool', 'Tool', { toolName: 'echo', argumentBindings: { [member]: `run.input.${member}` } }, 3),
      node('gt', 'End', { outcome: 'gt', resultPath: 'input.output.result' }),
      node('lte', 'End', { outcome: 'lte' }),
    ],
    [edge('start', 'cond'), on('cond', 'tool', 'Gt'), on('cond', 'lte', 'Lte'), edge('tool', 'gt')],
  );
}

/** Start → `length` Tool(`toolName`) nodes in a row → End. */
export function toolChainOf(length: number, toolName = 'echo', args: JsonObject = { hello: 'world' }): Graph {
  const tools = Array.from({ length }, (_, i) => node(`tool${i + 1}`, 'Tool', { toolName, arguments: args }, 3));
  const keys = ['start', ...tools.map((t) => t.key), 'end'];
  return graphOf(
    [node('start', 'Start', {}), ...tools, node('end', 'End', { outcome: 'done' })],
    keys.slice(1).map((k, i) => edge(keys[i]!, k)),
  );
}

/** Statuses of the given runs. */
export async function runStatuses(db: TestDatabase, runIds: string[]): Promise<Map<string, string>> {
  const res = await db.pool.query<{ id: string; status: string }>('select id, status from runs where id = any($1::uuid[])', [runIds]);
  return new Map(res.rows.map((r) => [r.id, r.status]));
}

/** (run, node) pairs whose `node.started` count differs from the node's attempt counter. */
export async function startMismatches(db: TestDatabase, runIds: string[]): Promise<unknown[]> {
  const res = await db.pool.query(
    `select n.run_id, n.node_key, n.attempt, count(e.seq)::int as started
       from node_runs n
       left join events e on e.run_id = n.run_id and e.node_key = n.node_key and e.kind = 'node.started'
      where n.run_id = any($1::uuid[]) and n.kind = 'Tool'
      group by n.run_id, n.node_key, n.attempt
     having count(e.seq) <> n.attempt`,
    [runIds],
  );
  return res.rows;
}
