/** Test-only builders: a definition, runs with node rows, and hand-made plans. */
import { randomUUID } from 'node:crypto';
import { DEFAULT_CORE_OPTIONS, type Graph, type GraphNode, type NodeKind, type PlanResult } from '@flowline/graph';
import type { Pool } from 'pg';
import { createRun, loadSnapshots, type LoadedSnapshot } from '../src';

export function gnode(key: string, kind: NodeKind, maxAttempts = 1): GraphNode {
  return {
    key,
    kind,
    label: key,
    joinPolicy: 'All',
    maxAttempts,
    timeoutSeconds: null,
    retryBackoff: { initialMs: 500, multiplier: 2, maxMs: 30_000 },
    onError: 'FailRun',
    inputSchema: null,
    outputSchema: null,
    position: null,
    config: {},
  };
}

/** start → tool → end */
export const CHAIN: Graph = {
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes: [gnode('start', 'Start'), gnode('tool', 'Tool', 3), gnode('end', 'End')],
  edges: [
    { key: 'e1', from: 'start', to: 'tool', label: null, condition: null, default: false },
    { key: 'e2', from: 'tool', to: 'end', label: null, condition: null, default: false },
  ],
};

export async function insertDefinition(pool: Pool, tenantId = 't1', graph: Graph = CHAIN): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO definitions (id, tenant_id, name, kind, graph, plan_graph, graph_hash, node_count)
     VALUES ($1, $2, 'def', 'Standard', $3, $3, 'hash', $4)`,
    [id, tenantId, JSON.stringify(graph), graph.nodes.length],
  );
  return id;
}

export interface RunOpts {
  tenantId?: string;
  status?: string;
  shard?: number;
  wakeAt?: Date | null;
  parentRunId?: string | null;
  graph?: Graph;
}

/** A run row (last_seq 1, run.created at seq 1) with one Pending node row per graph node. */
export async function insertRun(pool: Pool, definitionId: string, o: RunOpts = {}): Promise<string> {
  const id = randomUUID();
  const graph = o.graph ?? CHAIN;
  await pool.query(
    `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard,
                       wake_at, input, last_seq, parent_run_id)
     VALUES ($1, $2, $3, 1, $4, $4, 'hash', $5, $6, $7, '{"q":1}', 1, $8)`,
    [
      id,
      o.tenantId ?? 't1',
      definitionId,
      JSON.stringify(graph),
      o.status ?? 'Pending',
      o.shard ?? 0,
      o.wakeAt ?? null,
      o.parentRunId ?? null,
    ],
  );
  await pool.query(
    `INSERT INTO node_runs (run_id, node_key, kind, status, attempt_limit)
     SELECT $1, k, kd, 'Pending', l FROM unnest($2::text[], $3::text[], $4::int[]) AS t(k, kd, l)`,
    [
      id,
      graph.nodes.map((n) => n.key),
      graph.nodes.map((n) => n.kind),
      graph.nodes.map((n) => n.maxAttempts),
    ],
  );
  await pool.query(`INSERT INTO events (run_id, seq, kind) VALUES ($1, 1, 'run.created')`, [id]);
  return id;
}

export function emptyPlan(over: Partial<PlanResult> = {}): PlanResult {
  return {
    run: null,
    nodes: [],
    events: [],
    enqueue: [],
    cancel: [],
    startChildren: [],
    cancelChildren: [],
    consumedIntentIds: [],
    consumedInvocationIds: [],
    wakeAt: null,
    ...over,
  };
}

/** Creates a run of `definitionId` through the store's createRun: input `inputJson`, one node row per node of `graph`. */
export async function createRunOf(pool: Pool, definitionId: string, graph: Graph, inputJson: string, tenantId = 't1'): Promise<string> {
  const r = await createRun(pool, {
    tenantId,
    definitionId,
    requestId: null,
    conversationId: null,
    shardCount: 8,
    prepare: () => ({ inputJson, nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })) }),
  });
  if (r.kind !== 'created') throw new Error(r.kind);
  return r.runId;
}

/** The planner snapshot of one run, as a dispatcher loads it. */
export async function snapshotOfRun(pool: Pool, runId: string): Promise<LoadedSnapshot> {
  const [s] = await loadSnapshots(pool, [runId], { maxConcurrentRuns: 100 });
  return s!;
}

/** A plan context at `now` whose ids are uuids numbered from it (deterministic per tick). */
export function tickContext(now: number) {
  let n = 0;
  return { now, options: DEFAULT_CORE_OPTIONS, newId: () => `00000000-0000-4000-8000-${String(now * 10 + ++n).padStart(12, '0')}` };
}
