/**
 * The SQL guards of the operator verbs agree with the verb table of @flowline/graph
 * (VERB_RULES): every verb is run against every run status and, for a node verb, every node
 * status of a node of each kind class (plus a held decision and a survivor of a cancel), and
 * the statement's answer (recorded or not) must be the table's. A survivor is told by its
 * `cause` column alone: every Failed row carries class Interrupted and the survivor's reason
 * text, so a guard reading the text instead of the cause would disagree with the table.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NODE_STATUSES,
  OPERATOR_VERBS,
  RUN_STATUSES,
  VERB_RULES,
  verbApplies,
  type NodeKind,
  type NodeStatus,
  type OperatorVerb,
  type RunStatus,
} from '@flowline/graph';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { insertDefinition } from './definitions';
import { grantStep, overrideNodeInput, setBreakpoints, setEdgeOverride, setRunPaused } from './operator';
import { createRun } from './run-create';
import { appendSteer, recordDecision, recordNodeIntent, requestCancel } from './intents';

const TENANT = 't1';
/** the reason text the drain writes on a survivor (libs/graph planner/drain.ts); never what tells one */
const SURVIVOR_TEXT = 'cancel not confirmed by the worker by its grace deadline (CANCEL_DRAIN_GRACE_MS): the work may still be running';
/** one kind of each class the table names: lane work, model calls, gates, a held decision */
const KINDS: NodeKind[] = ['Tool', 'Agent', 'LlmCall', 'Pause', 'ChatInput', 'DecisionModel'];

let db: TestDatabase;
let runId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const defId = (
    await insertDefinition(db.pool, {
      id: randomUUID(),
      tenantId: TENANT,
      name: 'd',
      description: null,
      kind: 'Standard',
      graphJson: '{}',
      planGraphJson: '{"nodes":[]}',
      graphHash: 'h',
      nodeCount: 1,
    })
  ).id;
  const created = await createRun(db.pool, {
    tenantId: TENANT,
    definitionId: defId,
    requestId: null,
    conversationId: null,
    shardCount: 8,
    prepare: () => ({ inputJson: '{}', nodes: [{ key: 'n', kind: 'Tool', attemptLimit: 1 }] }),
  });
  if (created.kind !== 'created') throw new Error('run not created');
  runId = created.runId;
});
afterAll(async () => {
  await db?.drop();
});

interface NodeCase {
  kind: NodeKind;
  status: NodeStatus;
  held: boolean;
  survivor: boolean;
}

/** Puts the run (and its node) in the state under test, with nothing recorded on either. */
async function setState(verb: OperatorVerb, runStatus: RunStatus, n: NodeCase | null): Promise<void> {
  const paused = verb === 'resume' || verb === 'step';
  await db.pool.query(`DELETE FROM intents WHERE run_id = $1`, [runId]);
  await db.pool.query(
    `UPDATE runs SET status = $2, paused = $3, step_allowance = NULL, edge_overrides = '{}'::jsonb, breakpoints = '[]'::jsonb WHERE id = $1`,
    [runId, runStatus, paused],
  );
  const node = n ?? { kind: 'Tool', status: 'Pending', held: false, survivor: false };
  const failed = node.status === 'Failed';
  await db.pool.query(
    `UPDATE node_runs SET kind = $2, status = $3, held = $4, failure_class = $5, reason = $6, cause = $7,
            decision = NULL, steering = '[]'::jsonb, input_override = NULL, attempt = 1
     WHERE run_id = $1 AND node_key = 'n'`,
    [
      runId,
      node.kind,
      node.status,
      node.held,
      failed ? 'Interrupted' : 'None',
      failed ? SURVIVOR_TEXT : null,
      node.survivor ? 'CancelUnconfirmed' : 'None',
    ],
  );
}

/** Runs the verb's statement; true when it recorded the act. */
async function act(verb: OperatorVerb): Promise<boolean> {
  switch (verb) {
    case 'cancel':
      return (await requestCancel(db.pool, TENANT, runId, null))?.outcome === 'cancelling';
    case 'pause':
      return (await setRunPaused(db.pool, TENANT, runId, true)) !== null;
    case 'resume':
      return (await setRunPaused(db.pool, TENANT, runId, false)) !== null;
    case 'step':
      return (await grantStep(db.pool, TENANT, runId, { id: randomUUID(), mode: 'one', nodeKey: null })) !== null;
    case 'breakpoints':
      return setBreakpoints(db.pool, TENANT, runId, ['n']);
    case 'override':
      return (await setEdgeOverride(db.pool, TENANT, runId, { key: 'e1', from: 'n', to: 'n' }, true)) !== null;
    case 'skip':
    case 'retry':
      return (await recordNodeIntent(db.pool, TENANT, runId, 'n', verb, '{}')) === 'recorded';
    case 'complete':
      return (await recordNodeIntent(db.pool, TENANT, runId, 'n', 'complete', '{"output":1}')) === 'recorded';
    case 'input':
      return overrideNodeInput(db.pool, TENANT, runId, 'n', '{}');
    case 'steer':
      return appendSteer(db.pool, TENANT, runId, 'n', { operationId: randomUUID(), message: 'm', atUtc: 0 }, 5);
    case 'decide':
      return (await recordDecision(db.pool, TENANT, runId, 'n', 'op', '{"decision":"Approve"}')) !== null;
  }
}

function nodeCases(): NodeCase[] {
  return KINDS.flatMap((kind) =>
    NODE_STATUSES.flatMap((status) => [
      { kind, status, held: false, survivor: false },
      ...(status === 'Succeeded' ? [{ kind, status, held: true, survivor: false }] : []),
      ...(status === 'Failed' ? [{ kind, status, held: false, survivor: true }] : []),
    ]),
  );
}

describe('the SQL guards of the operator verbs', () => {
  it.each([...OPERATOR_VERBS])('agree with the verb table for %s in every state', async (verb) => {
    const mismatches: string[] = [];
    const cases = VERB_RULES[verb].scope === 'run' ? [null] : nodeCases();
    let accepted = 0;
    for (const runStatus of RUN_STATUSES) {
      for (const n of cases) {
        await setState(verb, runStatus, n);
        const expected = verbApplies(verb, {
          runStatus,
          ...(n ? { node: { status: n.status, kind: n.kind, held: n.held, cancelSurvivor: n.survivor } } : {}),
        });
        const got = await act(verb);
        if (got) accepted++;
        if (got !== expected) mismatches.push(`${runStatus} run${n ? `, ${n.kind} ${n.status}${n.held ? ' held' : ''}${n.survivor ? ' survivor' : ''}` : ''}: SQL ${got}, table ${expected}`);
      }
    }
    expect(mismatches).toEqual([]);
    // the statement did accept somewhere: the comparison is not all refusals
    expect(accepted).toBeGreaterThan(0);
  }, 120_000);
});
