/**
 * An Agent's checkpointed transcript (`agent_steps`): written by the LLM worker one step at a
 * time, read back when a new invocation of the node resumes, and read by the API for the tool
 * call a parked Agent waits on. Payloads are sealed per step (ENCRYPTION_KEY).
 */
import type { JsonObject } from '@flowline/graph';
import { sealJson, openJson, type Sealed } from '../crypto';
import { encodeJson } from '../json-codec';
import type { Queryable } from './transaction';

/** What a step records. */
export type AgentStepKind = 'model' | 'tool' | 'approval' | 'steer';

/** One step as written and read. */
export interface AgentStep {
  step: number;
  generation: number;
  attempt: number;
  kind: AgentStepKind;
  payload: JsonObject;
  /** the payload's UTF-8 size as written */
  bytes: number;
}

/** Where a step's payload lives (its AAD). */
export function agentStepAt(runId: string, nodeKey: string, step: number): Sealed {
  return { table: 'agent_steps', column: 'payload', row: `${runId}/${nodeKey}/${step}` };
}

interface StepRow {
  step: number;
  generation: number;
  attempt: number;
  kind: AgentStepKind;
  payload: unknown;
  bytes: number;
}

const open = (runId: string, nodeKey: string, r: StepRow): AgentStep => ({
  step: r.step,
  generation: r.generation,
  attempt: r.attempt,
  kind: r.kind,
  payload: openJson<JsonObject>(r.payload, agentStepAt(runId, nodeKey, r.step)),
  bytes: r.bytes,
});

/*
 * Inputs: $1 run, $2 node, $3 step, $4 generation, $5 attempt, $6 kind, $7 payload (sealed),
 * $8 bytes. Guard: the run exists (its tenant is copied); a step already written is kept (the
 * first writer wins: a duplicate invocation adopts what is stored). Result: the stored step.
 */
const APPEND_SQL = `
WITH ins AS (
  INSERT INTO agent_steps (run_id, node_key, step, tenant_id, generation, attempt, kind, payload, bytes)
  SELECT $1, $2, $3, r.tenant_id, $4, $5, $6, $7::jsonb, $8 FROM runs r WHERE r.id = $1
  ON CONFLICT (run_id, node_key, step) DO NOTHING
  RETURNING step, generation, attempt, kind, payload, bytes
)
SELECT * FROM ins
UNION ALL
SELECT step, generation, attempt, kind, payload, bytes FROM agent_steps
WHERE run_id = $1 AND node_key = $2 AND step = $3 AND NOT EXISTS (SELECT 1 FROM ins)`;

/**
 * Writes one step (or finds the one a concurrent invocation wrote first) and returns the
 * stored step; null when the run does not exist.
 */
export async function appendAgentStep(
  db: Queryable,
  runId: string,
  nodeKey: string,
  step: Omit<AgentStep, 'bytes'>,
): Promise<AgentStep | null> {
  const text = encodeJson(step.payload);
  const bytes = Buffer.byteLength(text, 'utf8');
  const sealed = encodeJson(sealJson(step.payload, agentStepAt(runId, nodeKey, step.step)));
  const res = await db.query<StepRow>({
    name: 'flowline_append_agent_step',
    text: APPEND_SQL,
    values: [runId, nodeKey, step.step, step.generation, step.attempt, step.kind, sealed, bytes],
  });
  const row = res.rows[0];
  return row ? open(runId, nodeKey, row) : null;
}

/** Every step of a node, oldest first (all generations: the caller keeps its own). */
export async function loadAgentSteps(db: Queryable, runId: string, nodeKey: string): Promise<AgentStep[]> {
  const res = await db.query<StepRow>({
    name: 'flowline_load_agent_steps',
    text: `SELECT step, generation, attempt, kind, payload, bytes FROM agent_steps WHERE run_id = $1 AND node_key = $2 ORDER BY step`,
    values: [runId, nodeKey],
  });
  return res.rows.map((r) => open(runId, nodeKey, r));
}

/** A step as the API shows it: with when it was written. */
export interface AgentStepRead extends AgentStep {
  createdAt: Date;
}

/** One page of a node's transcript and whether more steps follow it. */
export interface AgentStepPage {
  steps: AgentStepRead[];
  more: boolean;
}

/*
 * Inputs: $1 run, $2 node, $3 tenant, $4 the last step already read (-1 for the first page),
 * $5 the page size plus one. Guard: the tenant owns the rows (a run id of another tenant reads
 * nothing). Result: the steps after $4, oldest first, along the primary key (run, node, step).
 */
const PAGE_SQL = `SELECT step, generation, attempt, kind, payload, bytes, created_at FROM agent_steps
WHERE run_id = $1 AND node_key = $2 AND tenant_id = $3 AND step > $4
ORDER BY step LIMIT $5`;

/**
 * A page of the node's steps after `afterStep` (all generations, oldest first), opened; one
 * row past `limit` is read to tell whether another page follows.
 */
export async function listAgentSteps(
  db: Queryable,
  tenantId: string,
  runId: string,
  nodeKey: string,
  afterStep: number | null,
  limit: number,
): Promise<AgentStepPage> {
  const res = await db.query<StepRow & { created_at: Date }>({
    name: 'flowline_list_agent_steps',
    text: PAGE_SQL,
    values: [runId, nodeKey, tenantId, afterStep ?? -1, limit + 1],
  });
  const rows = res.rows.slice(0, limit);
  return { steps: rows.map((r) => ({ ...open(runId, nodeKey, r), createdAt: r.created_at })), more: res.rows.length > limit };
}

/** The tool call a parked Agent asks a person about: its request step. */
export interface PendingToolCall {
  step: number;
  /** the tool as the Agent names it */
  tool: string;
  arguments: JsonObject;
  /** the tool's input schema, when it declares one: an approval's edited arguments must match it */
  inputSchema: JsonObject | null;
}

/**
 * The tool call the node's transcript last asked approval for and no decision answered yet
 * (its last step is the request), or null. Reads only the node's last step.
 */
export async function pendingToolCall(db: Queryable, tenantId: string, runId: string, nodeKey: string): Promise<PendingToolCall | null> {
  const res = await db.query<StepRow>({
    name: 'flowline_pending_tool_call',
    text: `SELECT step, generation, attempt, kind, payload, bytes FROM agent_steps
           WHERE run_id = $1 AND node_key = $2 AND tenant_id = $3 ORDER BY step DESC LIMIT 1`,
    values: [runId, nodeKey, tenantId],
  });
  const row = res.rows[0];
  if (!row || row.kind !== 'approval') return null;
  const p = open(runId, nodeKey, row).payload;
  if (p['phase'] !== 'requested' || typeof p['tool'] !== 'string') return null;
  const args = p['arguments'];
  const schema = p['inputSchema'];
  return {
    step: row.step,
    tool: p['tool'],
    arguments: args !== null && typeof args === 'object' && !Array.isArray(args) ? args : {},
    inputSchema: schema !== null && typeof schema === 'object' && !Array.isArray(schema) ? schema : null,
  };
}
