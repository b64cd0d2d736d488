/**
 * ENCRYPTION_KEY (CONTRACT §7): with a key, graphs and documents are stored AES-256-GCM
 * sealed (AAD table.column.row) — the raw rows hold no plaintext — the store reads them back
 * equal, and a ciphertext moved to another row fails to open with a keyed error.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Graph } from '@flowline/graph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import {
  appendSteer,
  applyPlans,
  configureEncryption,
  duplicateDefinition,
  EncryptedValueError,
  exactJson,
  findUnpublished,
  getDefinition,
  getDefinitionVersion,
  getNodeRun,
  getRunDetail,
  insertDefinition,
  listMessages,
  listRunEvents,
  loadSnapshots,
  overrideNodeInput,
  publishNodeOutputs,
  recordApproval,
  recordDecision,
  recordNodeIntent,
  sendMessage,
  updateDefinition,
} from '../src';
import { createRunOf, emptyPlan, gnode, insertDefinition as insertPlainDefinition, insertRun as insertPlainRun, snapshotOfRun } from './fixtures';

/** Put in every document; must never appear in a raw row. */
const MARK = 'PLAINTEXT-MARKER-7f3c';
const TENANT = 't1';
const BIG = '12345678901234567890123';

let db: TestDatabase;

const GRAPH: Graph = {
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes: [
    { ...gnode('start', 'Start'), config: {} },
    { ...gnode('ask', 'LlmCall', 2), config: { prompt: `say ${MARK}` } },
    { ...gnode('gate', 'Pause'), config: {} },
    { ...gnode('sub', 'Subworkflow'), config: {} },
    { ...gnode('end', 'End'), config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'ask', label: null, condition: null, default: false },
    { key: 'e2', from: 'ask', to: 'end', label: null, condition: null, default: false },
  ],
};
/** the submitted document: with a number a double cannot hold, which must stay exact */
const GRAPH_JSON = JSON.stringify(GRAPH).replace('"outcome":"done"', `"outcome":"done","big":${BIG}`);

const seed = (input: unknown) => () => ({
  inputJson: JSON.stringify(input),
  nodes: GRAPH.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
});

async function newDefinition(name = 'enc'): Promise<string> {
  const d = await insertDefinition(db.pool, {
    id: randomUUID(),
    tenantId: TENANT,
    name,
    description: null,
    kind: 'Standard',
    graphJson: GRAPH_JSON,
    planGraphJson: JSON.stringify(GRAPH),
    graphHash: 'h',
    nodeCount: GRAPH.nodes.length,
  });
  return d.id;
}

const newRun = (definitionId: string, input: unknown = { q: MARK }) => createRunOf(db.pool, definitionId, GRAPH, JSON.stringify(input), TENANT);
const snap = (runId: string) => snapshotOfRun(db.pool, runId);

/** Every row of the store's tables as text: what someone reading the database sees. */
async function rawDump(): Promise<string> {
  const tables = ['definitions', 'definition_versions', 'runs', 'node_runs', 'events', 'intents', 'messages'];
  const parts: string[] = [];
  for (const t of tables) {
    const r = await db.pool.query<{ t: string }>(`SELECT coalesce(json_agg(x)::text, '') AS t FROM ${t} x`);
    parts.push(r.rows[0]!.t);
  }
  return parts.join('\n');
}

beforeAll(async () => {
  db = await createTestDatabase();
  configureEncryption(randomBytes(32).toString('base64'));
});
afterAll(async () => {
  configureEncryption(undefined);
  await db.drop();
});

describe('with ENCRYPTION_KEY set', () => {
  let defId: string;
  let runId: string;
  let childRunId: string;

  it('stores definitions and runs sealed and reads them back equal (exact numbers kept)', async () => {
    defId = await newDefinition();
    runId = await newRun(defId);

    const def = await db.pool.query(`SELECT graph::text AS g, plan_graph::text AS p, plan_graph FROM definitions WHERE id = $1`, [defId]);
    expect(def.rows[0].g).not.toContain(MARK);
    expect(def.rows[0].p).not.toContain(MARK);
    expect(def.rows[0].g).toContain('"$enc": "v1"');
    // the clear skeleton beside the envelope: structure only
    expect(def.rows[0].plan_graph.nodes).toEqual(GRAPH.nodes.map((n) => ({ key: n.key, kind: n.kind, maxAttempts: n.maxAttempts })));

    const run = await db.pool.query(`SELECT graph::text AS g, plan_graph::text AS p, input::text AS i FROM runs WHERE id = $1`, [runId]);
    for (const v of Object.values(run.rows[0] as Record<string, string>)) expect(v).not.toContain(MARK);

    expect((await getDefinition(db.pool, TENANT, defId))!.graph).toEqual(exactJson(GRAPH_JSON));
    expect((await getRunDetail(db.pool, TENANT, runId))!.graph).toEqual(exactJson(GRAPH_JSON));

    const s = await snap(runId);
    expect(s.graph).toEqual(GRAPH);
    expect(s.run.input).toEqual({ q: MARK });
  });

  it('re-seals a definition on a metadata-only update and on duplication; runs of the old version still read', async () => {
    const id = await newDefinition('to-update');
    const oldRun = await newRun(id);
    const upd = await updateDefinition(db.pool, TENANT, id, 1, { name: 'renamed' });
    expect(upd).not.toBe('conflict');
    expect((upd as { graph: unknown; version: number }).version).toBe(2);
    expect((await getDefinition(db.pool, TENANT, id))!.graph).toEqual(exactJson(GRAPH_JSON));
    expect((await snap(oldRun)).graph).toEqual(GRAPH);
    const newRunId = await newRun(id);
    expect((await snap(newRunId)).graph).toEqual(GRAPH);

    const copy = await duplicateDefinition(db.pool, TENANT, id, randomUUID(), (n) => `${n} copy`);
    expect(copy!.graph).toEqual(exactJson(GRAPH_JSON));
    // every recorded version is sealed to its own <id>@<version> and reads back equal
    const versions = await db.pool.query<{ g: string }>(`SELECT graph::text AS g FROM definition_versions WHERE definition_id = ANY($1::uuid[])`, [[id, copy!.id]]);
    expect(versions.rows).toHaveLength(3);
    for (const v of versions.rows) expect(v.g).toContain('"$enc": "v1"');
    for (const [d, v] of [[id, 1], [id, 2], [copy!.id, 1]] as const) expect((await getDefinitionVersion(db.pool, TENANT, d, v))!.graph).toEqual(exactJson(GRAPH_JSON));
    expect((await snap(await newRun(copy!.id))).graph).toEqual(GRAPH);
  });

  it('seals what a dispatcher commit writes: node documents, run output, steering events, child input', async () => {
    childRunId = randomUUID();
    const s = await snap(runId);
    const now = Date.now();
    const plan = emptyPlan({
      run: { expectVersion: s.run.version, set: { status: 'Running', startedAt: now, output: { outcome: 'done', result: MARK } } },
      nodes: [
        {
          nodeKey: 'ask',
          expect: { status: 'Pending', attempt: 0 },
          set: {
            status: 'Succeeded',
            attempt: 1,
            finishedAt: now,
            input: { input: MARK } as never,
            output: { output: { text: MARK }, branch: null } as never,
            loop: { iteration: 1, results: [MARK], last: MARK },
            steering: [{ operationId: 'op1', message: `steer ${MARK}`, atUtc: now, attempt: 1, applied: true }],
          },
        },
        { nodeKey: 'sub', expect: { status: 'Pending', attempt: 0 }, set: { status: 'Running', attempt: 1, childRunId } },
      ],
      events: [
        { kind: 'node.steered', nodeKey: 'ask', detail: { operationId: 'op1', message: `steer ${MARK}`, attempt: 1 } },
        { kind: 'node.completed', nodeKey: 'ask', detail: { attempt: 1 } },
      ],
      startChildren: [{ nodeKey: 'sub', childRunId, definitionId: defId, input: { child: MARK } }],
    });
    const out = await applyPlans(db.pool, [{ snapshot: s, plan }], { shardCount: 8 });
    expect(out.applied).toEqual([runId]);

    expect(await rawDump()).not.toContain(MARK);

    // the child run was seeded inside the database from the clear node skeleton
    const child = await db.pool.query(`SELECT node_key, attempt_limit FROM node_runs WHERE run_id = $1 ORDER BY node_key`, [childRunId]);
    expect(child.rows).toEqual(
      [...GRAPH.nodes].sort((a, b) => (a.key < b.key ? -1 : 1)).map((n) => ({ node_key: n.key, attempt_limit: n.maxAttempts })),
    );
    const c = await snap(childRunId);
    expect(c.run.input).toEqual({ child: MARK });
    expect(c.graph).toEqual(GRAPH);

    const p = await snap(runId);
    const ask = p.nodes.find((n) => n.nodeKey === 'ask')!;
    expect(ask.output).toEqual({ output: { text: MARK }, branch: null });
    expect(ask.input).toEqual({ input: MARK });
    expect(ask.loop).toEqual({ iteration: 1, results: [MARK], last: MARK });
    expect(ask.steering[0]!.message).toBe(`steer ${MARK}`);
    expect((await getRunDetail(db.pool, TENANT, runId))!.output).toEqual({ outcome: 'done', result: MARK });
    expect((await getNodeRun(db.pool, runId, 'ask'))!.output).toEqual({ output: { text: MARK }, branch: null });

    const ev = await listRunEvents(db.pool, runId, 0, 100);
    expect(ev.events.find((e) => e.kind === 'node.steered')!.detail).toEqual({ operationId: 'op1', message: `steer ${MARK}`, attempt: 1 });
    expect(ev.events.find((e) => e.kind === 'node.completed')!.detail).toEqual({ attempt: 1 });

    // the child, finishing, hands its sealed output to the parent's snapshot
    const cs = await snap(childRunId);
    const done = await applyPlans(
      db.pool,
      [{ snapshot: cs, plan: emptyPlan({ run: { expectVersion: cs.run.version, set: { status: 'Completed', output: { outcome: 'ok', result: MARK } } } }) }],
      { shardCount: 8 },
    );
    expect(done.applied).toEqual([childRunId]);
    expect((await snap(runId)).children.find((x) => x.childRunId === childRunId)!.output).toEqual({ outcome: 'ok', result: MARK });
  });

  it('seals operator writes and gate decisions', async () => {
    const rid = await newRun(defId, { other: 1 });
    await db.pool.query(`UPDATE node_runs SET status = 'Running', attempt = 1 WHERE run_id = $1 AND node_key = 'ask'`, [rid]);
    expect(await appendSteer(db.pool, TENANT, rid, 'ask', { operationId: 'op-s', message: `m ${MARK}`, atUtc: 5 }, 5)).toBe(true);
    // the operationId guard still reads the array
    expect(await appendSteer(db.pool, TENANT, rid, 'ask', { operationId: 'op-s', message: 'again', atUtc: 6 }, 5)).toBe(false);
    expect(await overrideNodeInput(db.pool, TENANT, rid, 'end', `{"x":"${MARK}","n":${BIG}}`)).toBe(true);
    expect(await recordNodeIntent(db.pool, TENANT, rid, 'ask', 'complete', JSON.stringify({ output: { v: MARK } }))).toBe('recorded');
    // a sealed payload is still recognised as the same request, and another one as different
    expect(await recordNodeIntent(db.pool, TENANT, rid, 'ask', 'complete', JSON.stringify({ output: { v: MARK } }))).toBe('duplicate');
    expect(await recordNodeIntent(db.pool, TENANT, rid, 'ask', 'complete', JSON.stringify({ output: { v: 'x' } }))).toBe('pendingOther');
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval' WHERE run_id = $1 AND node_key = 'gate'`, [rid]);
    const decision = { operationId: 'op-d', decision: 'Approve', comment: `ok ${MARK}`, payload: { why: MARK }, at: 1, applied: false };
    expect(await recordDecision(db.pool, TENANT, rid, 'gate', 'op-d', JSON.stringify(decision))).not.toBeNull();

    expect(await rawDump()).not.toContain(MARK);

    const s = await snap(rid);
    expect(s.intents.filter((i) => i.kind === 'complete')).toEqual([
      expect.objectContaining({ kind: 'complete', nodeKey: 'ask', output: { v: MARK } }),
    ]);
    const ask = s.nodes.find((n) => n.nodeKey === 'ask')!;
    expect(ask.steering).toEqual([{ operationId: 'op-s', message: `m ${MARK}`, atUtc: 5, attempt: 1, applied: false }]);
    expect(s.nodes.find((n) => n.nodeKey === 'end')!.inputOverride).toEqual(exactJson(`{"input":{"x":"${MARK}","n":${BIG}}}`));
    expect(s.nodes.find((n) => n.nodeKey === 'gate')!.decision).toEqual(decision);

    const end = await getNodeRun(db.pool, rid, 'end');
    expect(end!.inputOverride).toEqual(exactJson(`{"input":{"x":"${MARK}","n":${BIG}}}`));
    expect((await getNodeRun(db.pool, rid, 'gate'))!.decision).toEqual(decision);
    expect((await getNodeRun(db.pool, rid, 'ask'))!.steering).toEqual([
      { operationId: 'op-s', message: `m ${MARK}`, atUtc: 5, attempt: 1, applied: false },
    ]);
  });

  it('seals the decisions recorded on an approval gate and reads them back on the node and in the snapshot', async () => {
    const rid = await newRun(defId, { other: 2 });
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', started_at = now() WHERE run_id = $1 AND node_key = 'gate'`, [rid]);
    const vote = { principal: 'key:0123456789abcdef', scopes: ['run'], groups: [], decision: 'Approve' as const, path: 'rest' as const, comment: `fine ${MARK}`, at: 7 };
    const out = await recordApproval(db.pool, TENANT, rid, 'gate', (gate) => {
      expect(gate.votes).toEqual([]);
      return { write: true, votes: [vote], decision: null, result: 'recorded' };
    });
    expect(out).toMatchObject({ result: 'recorded' });
    // the judge of the next decision reads the vote back, opened
    await recordApproval(db.pool, TENANT, rid, 'gate', (gate) => {
      expect(gate.votes).toEqual([vote]);
      return { write: false, result: null };
    });
    expect(await rawDump()).not.toContain(MARK);
    expect((await snap(rid)).nodes.find((n) => n.nodeKey === 'gate')!.approvals).toEqual([vote]);
    expect((await getNodeRun(db.pool, rid, 'gate'))!.approvals).toEqual([vote]);
  });

  it('seals conversation messages (user and published) and reads them back', async () => {
    const sent = await sendMessage(db.pool, {
      tenantId: TENANT,
      conversationId: 'conv-1',
      definitionId: defId,
      requestId: 'req-1',
      text: `hello ${MARK}`,
      attachments: [{ name: `${MARK}.txt` }],
      shardCount: 8,
      prepare: seed({ message: `hello ${MARK}` }),
    });
    expect(sent.kind).toBe('created');
    const rid = (sent as { runId: string }).runId;
    // a replay compares the opened text
    const again = await sendMessage(db.pool, {
      tenantId: TENANT,
      conversationId: 'conv-1',
      definitionId: defId,
      requestId: 'req-1',
      text: `hello ${MARK}`,
      attachments: [{ name: `${MARK}.txt` }],
      shardCount: 8,
      prepare: seed({ message: `hello ${MARK}` }),
    });
    expect(again.kind).toBe('replayed');

    // the End succeeded with a sealed output: the heal scan opens it, the publish seals the text
    const s = await snap(rid);
    const out = await applyPlans(
      db.pool,
      [
        {
          snapshot: s,
          plan: emptyPlan({
            nodes: [
              {
                nodeKey: 'end',
                expect: { status: 'Pending', attempt: 0 },
                set: { status: 'Succeeded', attempt: 1, output: { output: { text: `answer ${MARK}` }, branch: null } as never },
              },
            ],
          }),
        },
      ],
      { shardCount: 8 },
    );
    expect(out.applied).toEqual([rid]);
    await db.pool.query(`UPDATE node_runs SET publishes = true WHERE run_id = $1 AND node_key = 'end'`, [rid]);
    const unpublished = await findUnpublished(db.pool, [(await db.pool.query(`SELECT shard FROM runs WHERE id = $1`, [rid])).rows[0].shard], 10);
    expect(unpublished.map((u) => u.output)).toEqual([{ output: { text: `answer ${MARK}` }, branch: null }]);
    const pub = await publishNodeOutputs(db.pool, [{ runId: rid, nodeKey: 'end', attempt: 1, text: `answer ${MARK}` }]);
    expect(pub.published).toHaveLength(1);

    expect(await rawDump()).not.toContain(MARK);

    const msgs = await listMessages(db.pool, TENANT, 'conv-1', 10, null);
    expect(msgs.items.map((m) => [m.role, m.text, m.attachments])).toEqual([
      ['user', `hello ${MARK}`, [{ name: `${MARK}.txt` }]],
      ['assistant', `answer ${MARK}`, []],
    ]);
  });

  it('refuses a ciphertext moved to another row with a keyed error naming table, column and row', async () => {
    const a = await newRun(defId, { a: MARK });
    const b = await newRun(defId, { b: MARK });
    await db.pool.query(
      `UPDATE node_runs SET output = (SELECT output FROM node_runs WHERE run_id = $1 AND node_key = 'ask') WHERE run_id = $2 AND node_key = 'end'`,
      [runId, runId],
    );
    const err = await getNodeRun(db.pool, runId, 'end').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncryptedValueError);
    expect(err).toMatchObject({
      code: 'EncryptedValueUnreadable',
      details: [{ table: 'node_runs', column: 'output', row: `${runId}/end` }],
    });
    expect((err as Error).message).not.toContain(MARK);

    // run b gets run a's input: b is left out of the load (reported), a still loads
    await db.pool.query(`UPDATE runs SET input = (SELECT input FROM runs WHERE id = $1) WHERE id = $2`, [a, b]);
    const unreadable: Array<[string, EncryptedValueError]> = [];
    const loaded = await loadSnapshots(db.pool, [a, b], { maxConcurrentRuns: 100, onUnreadable: (id, e) => unreadable.push([id, e]) });
    expect(loaded.map((x) => x.run.id)).toEqual([a]);
    expect(unreadable.map(([id, e]) => [id, e.details[0]])).toEqual([[b, { table: 'runs', column: 'input', row: b }]]);

    // a definition's graph copied onto another definition does not open there
    const other = await newDefinition('other');
    await db.pool.query(`UPDATE definitions SET graph = (SELECT graph FROM definitions WHERE id = $1) WHERE id = $2`, [defId, other]);
    await expect(getDefinition(db.pool, TENANT, other)).rejects.toMatchObject({
      details: [{ table: 'definitions', column: 'graph', row: `${other}@1` }],
    });
  });

  it('reads rows written before the key was set (mixed mode), and an envelope without a key is a keyed error', async () => {
    const plainDef = await insertPlainDefinition(db.pool, TENANT);
    const plainRun = await insertPlainRun(db.pool, plainDef, { tenantId: TENANT });
    const s = await snap(plainRun);
    expect(s.run.input).toEqual({ q: 1 });
    expect(s.graph.nodes.map((n) => n.key)).toEqual(['start', 'tool', 'end']);

    configureEncryption(undefined);
    try {
      await expect(getDefinition(db.pool, TENANT, defId)).rejects.toMatchObject({ code: 'EncryptedValueUnreadable' });
      // and without a key nothing is sealed on write
      const id = await newDefinition('plain');
      const raw = await db.pool.query(`SELECT graph::text AS g FROM definitions WHERE id = $1`, [id]);
      expect(raw.rows[0].g).toContain(MARK);
    } finally {
      configureEncryption(randomBytes(32).toString('hex'));
    }
  });
});
