/**
 * CONTRACT §1.2 at the store boundary: every document the store writes and reads — run
 * input, plan graph constants, node documents, run output, durable results, operator
 * intents, input overrides, decisions, child inputs — keeps a number a double cannot
 * hold exact (a `JsonNumber` on the JS side, `numeric` in jsonb), with and without
 * ENCRYPTION_KEY (a sealed value's plaintext is JSON text too).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { JsonNumber, stringifyJson, type Graph } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import {
  applyPlans,
  configureEncryption,
  getNodeRun,
  getRunDetail,
  insertDefinition,
  listRunEvents,
  overrideNodeInput,
  recordDecision,
  recordNodeIntent,
} from '../src';
import { createRunOf, emptyPlan, gnode, snapshotOfRun } from './fixtures';

const TENANT = 't1';
/** 2^53 + 1, and a decimal no double equals */
const BIG = '9007199254740993';
const DEC = '0.1000000000000000055511151231257827';
const big = (text = BIG) => new JsonNumber(text);

const GRAPH: Graph = {
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes: [gnode('start', 'Start'), gnode('tool', 'Tool', 3), gnode('gate', 'Pause'), gnode('sub', 'Subworkflow'), gnode('end', 'End')],
  edges: [
    {
      key: 'e1',
      from: 'start',
      to: 'tool',
      label: null,
      condition: { path: 'output.input.big', op: 'Gt', value: big('9007199254740995') },
      default: false,
    },
    { key: 'e2', from: 'tool', to: 'end', label: null, condition: null, default: false },
  ],
};

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  configureEncryption(undefined);
  await db.drop();
});

describe.each([
  ['without ENCRYPTION_KEY', null],
  ['with ENCRYPTION_KEY', randomBytes(32).toString('hex')],
])('exact numbers in the store %s', (_mode, key) => {
  let definitionId: string;

  beforeAll(async () => {
    configureEncryption(key);
    const graphJson = stringifyJson(GRAPH);
    const d = await insertDefinition(db.pool, {
      id: randomUUID(),
      tenantId: TENANT,
      name: 'exact',
      description: null,
      kind: 'Standard',
      graphJson,
      planGraphJson: graphJson,
      graphHash: 'h',
      nodeCount: GRAPH.nodes.length,
    });
    definitionId = d.id;
  });

  const newRun = (inputJson: string) => createRunOf(db.pool, definitionId, GRAPH, inputJson, TENANT);
  const snap = (runId: string) => snapshotOfRun(db.pool, runId);

  it('loads the run input and the plan graph constants exact into a planner snapshot', async () => {
    const runId = await newRun(`{"big":${BIG},"dec":${DEC},"small":[1,2.5]}`);
    const s = await snap(runId);
    expect(s.run.input).toEqual({ big: big(), dec: big(DEC), small: [1, 2.5] });
    expect(s.graph.edges[0]!.condition!.value).toEqual(big('9007199254740995'));
    expect(((await getRunDetail(db.pool, TENANT, runId))!.graph as Graph).edges[0]!.condition!.value).toEqual(big('9007199254740995'));
    if (key === null) {
      // Postgres holds the digits themselves (jsonb numbers are numeric)
      const raw = await db.pool.query<{ b: string }>(`SELECT input->>'big' AS b FROM runs WHERE id = $1`, [runId]);
      expect(raw.rows[0]!.b).toBe(BIG);
    }
  });

  it('writes what a dispatcher commit carries exact and reads it back through the snapshot and the REST reads', async () => {
    const runId = await newRun('{}');
    const childRunId = randomUUID();
    const s = await snap(runId);
    const envelope = { status: 'succeeded', attempt: 1, branch: null, output: { result: { big: big(), dec: big(DEC) } } };
    const plan = emptyPlan({
      run: { expectVersion: s.run.version, set: { status: 'Running', startedAt: Date.now(), output: { outcome: 'done', result: big() } as never } },
      nodes: [
        {
          nodeKey: 'tool',
          expect: { status: 'Pending', attempt: 0 },
          set: { status: 'Succeeded', attempt: 1, input: { run: { input: { big: big() } }, upstream: {}, input: null } as never, output: envelope as never },
        },
        { nodeKey: 'sub', expect: { status: 'Pending', attempt: 0 }, set: { status: 'Running', attempt: 1, childRunId } },
      ],
      events: [{ kind: 'node.completed', nodeKey: 'tool', detail: { attempt: 1 } }],
      startChildren: [{ nodeKey: 'sub', childRunId, definitionId, input: { big: big() } as never }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], { shardCount: 8 })).applied).toEqual([runId]);

    const after = await snap(runId);
    const tool = after.nodes.find((n) => n.nodeKey === 'tool')!;
    expect(tool.output).toEqual(envelope);
    expect(tool.input).toEqual({ run: { input: { big: big() } }, upstream: {}, input: null });
    expect((await snap(childRunId)).run.input).toEqual({ big: big() });

    const detail = await getNodeRun(db.pool, runId, 'tool');
    expect(detail!.output).toEqual(envelope);
    expect(detail!.input).toEqual({ run: { input: { big: big() } }, upstream: {}, input: null });
    expect((await getRunDetail(db.pool, TENANT, runId))!.output).toEqual({ outcome: 'done', result: big() });
    expect((await listRunEvents(db.pool, runId, 0, 10)).events.map((e) => e.kind)).toContain('node.completed');
  });

  it('keeps a number written with an exponent as written: stored and read back in its own short form, never spelled out', async () => {
    const HUGE = '1e131071';
    const TINY = '-2.5E-16000';
    const runId = await newRun(`{"x":${HUGE},"y":${TINY},"d":1e-300}`);
    const s = await snap(runId);
    expect(s.run.input).toEqual({ x: big(HUGE), y: big(TINY), d: 1e-300 });
    const childRunId = randomUUID();
    const envelope = { status: 'succeeded', attempt: 1, branch: null, output: { x: big(HUGE) } };
    const plan = emptyPlan({
      run: { expectVersion: s.run.version, set: { status: 'Running', startedAt: Date.now(), output: { x: big(HUGE) } as never } },
      nodes: [
        { nodeKey: 'tool', expect: { status: 'Pending', attempt: 0 }, set: { status: 'Succeeded', attempt: 1, input: { run: { input: { x: big(HUGE) } }, upstream: {}, input: null } as never, output: envelope as never } },
        { nodeKey: 'sub', expect: { status: 'Pending', attempt: 0 }, set: { status: 'Running', attempt: 1, childRunId } },
      ],
      startChildren: [{ nodeKey: 'sub', childRunId, definitionId, input: { x: big(HUGE) } as never }],
    });
    expect((await applyPlans(db.pool, [{ snapshot: s, plan }], { shardCount: 8 })).applied).toEqual([runId]);
    expect(await recordNodeIntent(db.pool, TENANT, runId, 'end', 'complete', `{"output":{"x":${HUGE}}}`)).toBe('recorded');
    // the same payload again is recognised as the same request
    expect(await recordNodeIntent(db.pool, TENANT, runId, 'end', 'complete', `{"output":{"x":${HUGE}}}`)).toBe('duplicate');
    expect(await overrideNodeInput(db.pool, TENANT, runId, 'end', `{"n":${HUGE}}`)).toBe(true);

    const after = await snap(runId);
    const tool = after.nodes.find((n) => n.nodeKey === 'tool')!;
    expect(tool.output).toEqual(envelope);
    expect(tool.input).toEqual({ run: { input: { x: big(HUGE) } }, upstream: {}, input: null });
    expect(after.intents.find((i) => i.kind === 'complete')).toMatchObject({ output: { x: big(HUGE) } });
    expect(after.nodes.find((n) => n.nodeKey === 'end')!.inputOverride).toEqual({ input: { n: big(HUGE) } });
    expect((await snap(childRunId)).run.input).toEqual({ x: big(HUGE) });
    expect((await getNodeRun(db.pool, runId, 'tool'))!.output).toEqual(envelope);
    expect((await getRunDetail(db.pool, TENANT, runId))!.output).toEqual({ x: big(HUGE) });

    // what Postgres holds is short: no document of the run spells the number out
    const sizes = await db.pool.query<{ n: number }>(
      `SELECT length(input::text) AS n FROM runs WHERE id = ANY($1::uuid[]) UNION ALL
       SELECT greatest(length(coalesce(input::text, '')), length(coalesce(output::text, '')), length(coalesce(input_override::text, ''))) FROM node_runs WHERE run_id = $2 UNION ALL
       SELECT length(output::text) FROM runs WHERE id = $2 AND output IS NOT NULL UNION ALL
       SELECT length(payload::text) FROM intents WHERE run_id = $2`,
      [[runId, childRunId], runId],
    );
    expect(sizes.rows.length).toBeGreaterThan(5);
    expect(Math.max(...sizes.rows.map((r) => r.n))).toBeLessThan(1_000);
  });

  it('keeps complete payloads, input overrides and decisions exact', async () => {
    const runId = await newRun('{}');
    expect(await recordNodeIntent(db.pool, TENANT, runId, 'tool', 'complete', `{"output":{"big":${BIG}}}`)).toBe('recorded');
    expect(await overrideNodeInput(db.pool, TENANT, runId, 'end', `{"n":-${BIG}}`)).toBe(true);
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval' WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    const decisionJson = `{"operationId":"op","decision":"Approve","comment":null,"payload":{"big":${BIG}},"at":1,"applied":false}`;
    expect(await recordDecision(db.pool, TENANT, runId, 'gate', 'op', decisionJson)).not.toBeNull();

    const s = await snap(runId);
    expect(s.intents.find((i) => i.kind === 'complete')).toMatchObject({ output: { big: big() } });
    expect(s.nodes.find((n) => n.nodeKey === 'end')!.inputOverride).toEqual({ input: { n: big(`-${BIG}`) } });
    expect(s.nodes.find((n) => n.nodeKey === 'gate')!.decision).toMatchObject({ payload: { big: big() } });
    expect((await getNodeRun(db.pool, runId, 'end'))!.inputOverride).toEqual({ input: { n: big(`-${BIG}`) } });
    expect((await getNodeRun(db.pool, runId, 'gate'))!.decision).toMatchObject({ payload: { big: big() } });
  });
});
