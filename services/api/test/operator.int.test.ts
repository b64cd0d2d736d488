/**
 * Operator verbs through the API against real Postgres and Redis. Node and run states are
 * set with SQL (no dispatcher runs here): what is under test is the API's answer and the
 * guarded write it commits (row, intent, event, version bump).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, startHarness, startRun, type Harness } from './harness';

let h: Harness;
let defId: string;
let heldDefId: string;
beforeAll(async () => {
  h = await startHarness();
  defId = await createDefinition(h, {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'llm', kind: 'LlmCall', config: { prompt: 'hello' } },
      { key: 't', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 'gate', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve'] } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'llm' },
      { key: 'e2', from: 'llm', to: 't' },
      { key: 'e3', from: 't', to: 'gate' },
      { key: 'e4', from: 'gate', to: 'end' },
    ],
  });
  heldDefId = await createDefinition(h, {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'dm', kind: 'DecisionModel', config: { question: 'which?', labels: ['a', 'b'], minConfidence: 0.9 } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'dm' },
      { key: 'e2', from: 'dm', to: 'end' },
    ],
  });
});
afterAll(async () => {
  await h.close();
});

const q = (sql: string, params: unknown[] = []) => h.db.pool.query(sql, params);

/** A run of the main graph reading Running, with `nodes` set to the given statuses. */
async function runWith(nodes: Record<string, string> = {}, def = defId): Promise<string> {
  const runId = await startRun(h, def);
  await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [runId]);
  for (const [key, status] of Object.entries(nodes)) {
    await q(`UPDATE node_runs SET status = $3, attempt = CASE WHEN $3 = 'Pending' THEN 0 ELSE 1 END WHERE run_id = $1 AND node_key = $2`, [
      runId,
      key,
      status,
    ]);
  }
  return runId;
}
const runRow = async (runId: string) => (await q(`SELECT * FROM runs WHERE id = $1`, [runId])).rows[0];
const nodeRow = async (runId: string, key: string) =>
  (await q(`SELECT * FROM node_runs WHERE run_id = $1 AND node_key = $2`, [runId, key])).rows[0];
const intentsOf = async (runId: string) =>
  (await q(`SELECT kind, node_key, payload FROM intents WHERE run_id = $1 ORDER BY created_at, id`, [runId])).rows;
const eventsOf = async (runId: string) =>
  (await q(`SELECT seq, kind, node_key, detail FROM events WHERE run_id = $1 ORDER BY seq`, [runId])).rows;
const post = (path: string, body?: unknown, token?: string) => h.call('POST', path, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
const put = (path: string, body: unknown) => h.call('PUT', path, { body });

describe('steer', () => {
  it('appends an entry to a Running LlmCall against its attempt, with a steer intent, wake and version bump', async () => {
    const runId = await runWith({ start: 'Succeeded', llm: 'Running' });
    const before = await runRow(runId);
    const r = await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 's1', message: 'be brief' });
    expect(r.status).toBe(202);
    const node = await nodeRow(runId, 'llm');
    expect(node.steering).toEqual([expect.objectContaining({ operationId: 's1', message: 'be brief', attempt: 1, applied: false })]);
    expect(await intentsOf(runId)).toEqual([{ kind: 'steer', node_key: 'llm', payload: { operationId: 's1' } }]);
    const after = await runRow(runId);
    expect(after.version).toBe(before.version + 1);
    expect(after.wake_at).not.toBeNull();
    const detail = await h.call('GET', `/v1/runs/${runId}/nodes/llm`);
    expect(detail.body.steering[0]).toMatchObject({ operationId: 's1', message: 'be brief', attempt: 1, applied: false });
    expect(typeof detail.body.steering[0].atUtc).toBe('string');
  });

  it('replays 202 for the same operationId and message without a second entry, and refuses the id with another message', async () => {
    const runId = await runWith({ llm: 'Queued' });
    expect((await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'r1', message: 'm' })).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'r1', message: 'm' })).status).toBe(202);
    await q(`UPDATE node_runs SET status = 'Succeeded' WHERE run_id = $1 AND node_key = 'llm'`, [runId]);
    expect((await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'r1', message: 'm' })).status).toBe(202);
    const other = await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'r1', message: 'other' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('OperationIdReused');
    expect((await nodeRow(runId, 'llm')).steering).toHaveLength(1);
    expect(await intentsOf(runId)).toHaveLength(1);
  });

  it('answers 409 SteerLimitReached past MAX_STEERS_PER_NODE, even under concurrent requests', async () => {
    const runId = await runWith({ llm: 'Running' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: `c${i}`, message: `m${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([202, 202, 202, 202, 202, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error.code).toBe('SteerLimitReached');
    expect((await nodeRow(runId, 'llm')).steering).toHaveLength(5);
    expect(await intentsOf(runId)).toHaveLength(5);
  });

  it('refuses a Tool node, a Pending LlmCall and a cancelling run with 409 NodeStateConflict', async () => {
    const runId = await runWith({ llm: 'Pending', t: 'Running' });
    const tool = await post(`/v1/runs/${runId}/nodes/t/steer`, { operationId: 'x', message: 'm' });
    expect([tool.status, tool.body.error.code]).toEqual([409, 'NodeStateConflict']);
    const pending = await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'y', message: 'm' });
    expect([pending.status, pending.body.error.code]).toEqual([409, 'NodeStateConflict']);
    await q(`UPDATE node_runs SET status = 'Running' WHERE run_id = $1 AND node_key = 'llm'`, [runId]);
    await q(`UPDATE runs SET status = 'Cancelling' WHERE id = $1`, [runId]);
    const cancelling = await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'z', message: 'm' });
    expect([cancelling.status, cancelling.body.error.code]).toEqual([409, 'NodeStateConflict']);
    expect(await intentsOf(runId)).toEqual([]);
  });

  it('answers 404 for an unknown node, run or another tenant, and 400 for a bad body', async () => {
    const runId = await runWith({ llm: 'Running' });
    expect((await post(`/v1/runs/${runId}/nodes/nope/steer`, { operationId: 'a', message: 'm' })).status).toBe(404);
    expect((await post(`/v1/runs/00000000-0000-4000-8000-000000000000/nodes/llm/steer`, { operationId: 'a', message: 'm' })).status).toBe(404);
    expect((await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'a', message: 'm' }, KEYS.b)).status).toBe(404);
    expect((await post(`/v1/runs/${runId}/nodes/llm/steer`, { operationId: 'a' })).status).toBe(400);
  });
});

describe('pause and resume', () => {
  it('pauses with run.paused numbered from the run row, idempotently, and resumes with run.resumed', async () => {
    const runId = await runWith();
    const before = await runRow(runId);
    expect((await post(`/v1/runs/${runId}/pause`)).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/pause`)).status).toBe(202);
    let row = await runRow(runId);
    expect(row.paused).toBe(true);
    expect(row.version).toBe(before.version + 1);
    expect(row.last_seq).toBe(before.last_seq + 1);
    expect((await h.call('GET', `/v1/runs/${runId}`)).body.run.paused).toBe(true);
    expect((await post(`/v1/runs/${runId}/resume`)).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/resume`)).status).toBe(202);
    row = await runRow(runId);
    expect(row.paused).toBe(false);
    const events = await eventsOf(runId);
    expect(events.map((e) => [e.seq, e.kind])).toEqual([
      [1, 'run.created'],
      [2, 'run.paused'],
      [3, 'run.resumed'],
    ]);
    expect(row.last_seq).toBe(3);
  });

  it('resumes a run keeping its breakpoints and edge overrides: only the pause clears', async () => {
    const runId = await runWith({ start: 'Succeeded' });
    expect((await post(`/v1/runs/${runId}/pause`)).status).toBe(202);
    expect((await put(`/v1/runs/${runId}/breakpoints`, { nodeKeys: ['t'] })).status).toBe(200);
    expect((await put(`/v1/runs/${runId}/edges/e3/override`, { verdict: false })).status).toBe(200);
    expect((await post(`/v1/runs/${runId}/resume`)).status).toBe(202);
    const controls = await h.call('GET', `/v1/runs/${runId}/controls`);
    expect(controls.body).toEqual({ paused: false, breakpoints: ['t'], edgeOverrides: { e3: false }, step: null });
    const row = await runRow(runId);
    expect(row).toMatchObject({ paused: false, breakpoints: ['t'], edge_overrides: { e3: false } });
  });

  it('refuses to pause a finished run with 409 RunStateConflict; 404 for an unknown run', async () => {
    const runId = await runWith();
    await q(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    const r = await post(`/v1/runs/${runId}/pause`);
    expect([r.status, r.body.error.code]).toEqual([409, 'RunStateConflict']);
    expect((await post(`/v1/runs/${runId}/resume`)).status).toBe(202);
    expect((await post(`/v1/runs/00000000-0000-4000-8000-000000000000/pause`)).status).toBe(404);
    expect((await post(`/v1/runs/${runId}/pause`, undefined, KEYS.b)).status).toBe(404);
  });
});

describe('step', () => {
  it('answers 409 RunNotPaused on a run that is not paused', async () => {
    const runId = await runWith();
    const r = await post(`/v1/runs/${runId}/step`, { mode: 'one' });
    expect([r.status, r.body.error.code]).toEqual([409, 'RunNotPaused']);
    expect((await runRow(runId)).step_allowance).toBeNull();
  });

  it('grants one allowance on a paused run; an identical request coalesces, a different one replaces it', async () => {
    const runId = await runWith();
    await post(`/v1/runs/${runId}/pause`);
    const a = await post(`/v1/runs/${runId}/step`, { mode: 'one' });
    expect(a.status).toBe(202);
    expect(a.body).toMatchObject({ accepted: true, coalesced: false });
    const b = await post(`/v1/runs/${runId}/step`, { mode: 'one' });
    expect(b.body).toMatchObject({ stepId: a.body.stepId, coalesced: true });
    expect((await runRow(runId)).step_allowance).toEqual({ id: a.body.stepId, mode: 'one', nodeKey: null });
    const c = await post(`/v1/runs/${runId}/step`, { mode: 'node', nodeKey: 'llm' });
    expect(c.body.coalesced).toBe(false);
    expect((await runRow(runId)).step_allowance).toEqual({ id: c.body.stepId, mode: 'node', nodeKey: 'llm' });
  });

  it('answers 400 for a node step without a known nodeKey', async () => {
    const runId = await runWith();
    await post(`/v1/runs/${runId}/pause`);
    expect((await post(`/v1/runs/${runId}/step`, { mode: 'node' })).status).toBe(400);
    expect((await post(`/v1/runs/${runId}/step`, { mode: 'node', nodeKey: 'ghost' })).status).toBe(400);
    expect((await post(`/v1/runs/${runId}/step`, { mode: 'sideways' })).status).toBe(400);
  });
});

describe('breakpoints', () => {
  it('replaces the breakpoints with known node keys, idempotently', async () => {
    const runId = await runWith();
    for (let i = 0; i < 2; i++) {
      const r = await put(`/v1/runs/${runId}/breakpoints`, { nodeKeys: ['t', 'gate', 't'] });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ nodeKeys: ['t', 'gate'] });
    }
    expect((await runRow(runId)).breakpoints).toEqual(['t', 'gate']);
  });

  it('answers 400 keyed to each key that names no node of the run', async () => {
    const runId = await runWith();
    const r = await put(`/v1/runs/${runId}/breakpoints`, { nodeKeys: ['t', 'nope', 'e1'] });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: { key: string }) => d.key)).toEqual(['nodeKeys.1', 'nodeKeys.2']);
    expect((await runRow(runId)).breakpoints).toEqual([]);
  });
});

describe('edge override', () => {
  it('sets, repeats and clears an override with one node.overridden event per change', async () => {
    const runId = await runWith();
    const set = await put(`/v1/runs/${runId}/edges/e2/override`, { verdict: false });
    expect([set.status, set.body]).toEqual([200, { edgeKey: 'e2', verdict: false }]);
    expect((await put(`/v1/runs/${runId}/edges/e2/override`, { verdict: false })).status).toBe(200);
    expect((await runRow(runId)).edge_overrides).toEqual({ e2: false });
    expect((await put(`/v1/runs/${runId}/edges/e2/override`, { verdict: null })).status).toBe(200);
    expect((await runRow(runId)).edge_overrides).toEqual({});
    const ev = (await eventsOf(runId)).filter((e) => e.kind === 'node.overridden');
    expect(ev.map((e) => [e.node_key, e.detail.edgeKey, e.detail.verdict])).toEqual([
      ['llm', 'e2', false],
      ['llm', 'e2', null],
    ]);
  });

  it('answers 404 for an unknown edge, 400 for a bad verdict and 409 on a finished run', async () => {
    const runId = await runWith();
    expect((await put(`/v1/runs/${runId}/edges/nope/override`, { verdict: true })).status).toBe(404);
    expect((await put(`/v1/runs/${runId}/edges/e1/override`, { verdict: 'yes' })).status).toBe(400);
    await q(`UPDATE runs SET status = 'Cancelled' WHERE id = $1`, [runId]);
    const r = await put(`/v1/runs/${runId}/edges/e1/override`, { verdict: true });
    expect([r.status, r.body.error.code]).toEqual([409, 'RunStateConflict']);
  });
});

describe('skip', () => {
  it('records one skip intent for a Pending node; a repeat before it applies adds nothing', async () => {
    const runId = await runWith();
    expect((await post(`/v1/runs/${runId}/nodes/t/skip`)).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/nodes/t/skip`)).status).toBe(202);
    expect(await intentsOf(runId)).toEqual([{ kind: 'skip', node_key: 't', payload: {} }]);
  });

  it('carries {prune: true} to the planner, refuses a prune that is not a boolean, and a different pending skip of the node', async () => {
    const runId = await runWith();
    const bad = await post(`/v1/runs/${runId}/nodes/t/skip`, { prune: 'yes' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'ValidationFailed']);
    expect((await post(`/v1/runs/${runId}/nodes/t/skip`, { prune: true })).status).toBe(202);
    expect(await intentsOf(runId)).toEqual([{ kind: 'skip', node_key: 't', payload: { prune: true } }]);
    const other = await post(`/v1/runs/${runId}/nodes/t/skip`, {});
    expect([other.status, other.body.error.code]).toEqual([409, 'NodeStateConflict']);
  });

  it('takes a gate waiting on a person; refuses a settled node with 409 NodeStateConflict; a node it skipped answers 202', async () => {
    const runId = await runWith({ gate: 'WaitingForApproval', llm: 'Succeeded' });
    expect((await post(`/v1/runs/${runId}/nodes/gate/skip`)).status).toBe(202);
    expect(await intentsOf(runId)).toEqual([{ kind: 'skip', node_key: 'gate', payload: {} }]);
    expect((await post(`/v1/runs/${runId}/nodes/llm/skip`)).status).toBe(409);
    await q(`UPDATE node_runs SET status = 'Skipped', reason = 'skipped by operator' WHERE run_id = $1 AND node_key = 't'`, [runId]);
    expect((await post(`/v1/runs/${runId}/nodes/t/skip`)).status).toBe(202);
    // the replay of a skip already made records nothing (only the gate's intent stands)
    expect(await intentsOf(runId)).toEqual([{ kind: 'skip', node_key: 'gate', payload: {} }]);
    expect((await post(`/v1/runs/${runId}/nodes/ghost/skip`)).status).toBe(404);
  });
});

describe('retry', () => {
  it('records a retry intent for a Failed node (also on a Failed run), once while it is pending', async () => {
    const runId = await runWith({ t: 'Failed' });
    await q(`UPDATE runs SET status = 'Failed' WHERE id = $1`, [runId]);
    expect((await post(`/v1/runs/${runId}/nodes/t/retry`)).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/nodes/t/retry`)).status).toBe(202);
    expect(await intentsOf(runId)).toEqual([{ kind: 'retry', node_key: 't', payload: {} }]);
  });

  it('accepts a held DecisionModel and refuses Pending or Succeeded nodes with 409', async () => {
    const held = await runWith({}, heldDefId);
    await q(
      `UPDATE node_runs SET status = 'Succeeded', attempt = 1, held = true, pending_decision_kind = 'Operator' WHERE run_id = $1 AND node_key = 'dm'`,
      [held],
    );
    expect((await post(`/v1/runs/${held}/nodes/dm/retry`)).status).toBe(202);
    const runId = await runWith({ llm: 'Succeeded' });
    for (const key of ['t', 'llm']) {
      const r = await post(`/v1/runs/${runId}/nodes/${key}/retry`);
      expect([r.status, r.body.error.code]).toEqual([409, 'NodeStateConflict']);
    }
  });
});

describe('complete', () => {
  it('records a completion with the operator output; a repeat with the same output adds nothing, another output is refused', async () => {
    const runId = await runWith({ t: 'Running' });
    expect((await post(`/v1/runs/${runId}/nodes/t/complete`, { output: { result: 42 } })).status).toBe(202);
    expect((await post(`/v1/runs/${runId}/nodes/t/complete`, { output: { result: 42 } })).status).toBe(202);
    const other = await post(`/v1/runs/${runId}/nodes/t/complete`, { output: { result: 43 } });
    expect([other.status, other.body.error.code]).toEqual([409, 'NodeStateConflict']);
    expect(await intentsOf(runId)).toEqual([{ kind: 'complete', node_key: 't', payload: { output: { result: 42 } } }]);
  });

  it('refuses Pause nodes in any state, settled nodes, and a body without output', async () => {
    const runId = await runWith({ llm: 'Succeeded' });
    for (const status of ['Pending', 'WaitingForApproval']) {
      await q(`UPDATE node_runs SET status = $2 WHERE run_id = $1 AND node_key = 'gate'`, [runId, status]);
      const r = await post(`/v1/runs/${runId}/nodes/gate/complete`, { output: {} });
      expect([r.status, r.body.error.code]).toEqual([409, 'NodeStateConflict']);
    }
    expect((await post(`/v1/runs/${runId}/nodes/llm/complete`, { output: {} })).status).toBe(409);
    expect((await post(`/v1/runs/${runId}/nodes/t/complete`, {})).status).toBe(400);
    expect(await intentsOf(runId)).toEqual([]);
  });
});

describe('edit input', () => {
  it('replaces the input of a Pending node in one guarded write with a version bump and node.overridden', async () => {
    const runId = await runWith();
    const before = await runRow(runId);
    const r = await h.call('PUT', `/v1/runs/${runId}/nodes/t/input`, { raw: '{"input":{"big":12345678901234567890,"s":"x"}}' });
    expect(r.status).toBe(200);
    expect(r.res.headers.get('content-type')).toMatch(/json/);
    const raw = await q(`SELECT input_override::text AS t FROM node_runs WHERE run_id = $1 AND node_key = 't'`, [runId]);
    expect(raw.rows[0].t).toContain('12345678901234567890');
    const after = await runRow(runId);
    expect(after.version).toBe(before.version + 1);
    expect((await eventsOf(runId)).at(-1)).toMatchObject({ kind: 'node.overridden', node_key: 't', detail: { verb: 'input' } });
    expect((await put(`/v1/runs/${runId}/nodes/t/input`, { input: { s: 'y' } })).status).toBe(200);
    expect((await nodeRow(runId, 't')).input_override).toEqual({ input: { s: 'y' } });
  });

  it('refuses a node that is no longer Pending with 409 and leaves its input alone', async () => {
    const runId = await runWith({ t: 'Queued' });
    const r = await put(`/v1/runs/${runId}/nodes/t/input`, { input: 1 });
    expect([r.status, r.body.error.code]).toEqual([409, 'NodeStateConflict']);
    expect((await nodeRow(runId, 't')).input_override).toBeNull();
    expect((await put(`/v1/runs/${runId}/nodes/t/input`, {})).status).toBe(400);
  });
});

it('documents every operator route in the OpenAPI document', async () => {
  const doc = (await h.call('GET', '/openapi.json', { token: null })).body;
  const paths = Object.keys(doc.paths);
  for (const p of [
    '/v1/runs/{id}/nodes/{key}/steer',
    '/v1/runs/{id}/pause',
    '/v1/runs/{id}/resume',
    '/v1/runs/{id}/step',
    '/v1/runs/{id}/breakpoints',
    '/v1/runs/{id}/edges/{edgeKey}/override',
    '/v1/runs/{id}/nodes/{key}/skip',
    '/v1/runs/{id}/nodes/{key}/retry',
    '/v1/runs/{id}/nodes/{key}/complete',
    '/v1/runs/{id}/nodes/{key}/input',
  ]) {
    expect(paths).toContain(p);
  }
});
