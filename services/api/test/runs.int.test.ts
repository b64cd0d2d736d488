import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardWakeChannel, wakeChannel } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import { KEYS, createDefinition, lineGraph, pauseGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxRunInputBytes: 1000 });
});
afterAll(async () => {
  await h.close();
});

const RUN_SUMMARY_KEYS = [
  'id', 'definitionId', 'definitionVersion', 'status', 'failureClass', 'reason', 'paused', 'requestId', 'parentRunId', 'conversationId',
  'createdAt', 'startedAt', 'finishedAt', 'graphHash', 'lastSeq', 'forkedFrom', 'metadata', 'budget', 'usage', 'priority', 'notBefore', 'scheduleId',
].sort();

describe('starting a run', () => {
  it('answers 202 and commits run, node rows and run.created in one go, then publishes a wake on the run shard channel', async () => {
    const defId = await createDefinition(h, pauseGraph(), 'start');
    const sub = new Redis(h.redis.options);
    const woken: string[] = [];
    await sub.psubscribe(`${wakeChannel(h.prefix)}*`);
    const tenants: Record<string, string> = {};
    sub.on('pmessage', (_p, ch, msg) => {
      const m = JSON.parse(msg) as { runId: string; tenantId?: string };
      woken.push(`${ch} ${m.runId}`);
      if (m.tenantId) tenants[m.runId] = m.tenantId;
    });
    try {
      const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { n: 1 } } });
      expect(r.status).toBe(202);
      const runId = r.body.runId as string;
      const run = await h.db.pool.query(
        `SELECT r.status, r.wake_at, r.shard, r.last_seq, r.input, r.graph, r.plan_graph, r.graph_hash = d.graph_hash AS same_hash
         FROM runs r JOIN definitions d ON d.id = r.definition_id WHERE r.id = $1`,
        [runId],
      );
      const row = run.rows[0];
      expect(row).toMatchObject({ status: 'Pending', last_seq: 1, input: { n: 1 }, same_hash: true, graph: pauseGraph() });
      expect(row.wake_at).not.toBeNull();
      expect(row.shard).toBeGreaterThanOrEqual(0);
      expect(row.shard).toBeLessThan(16);
      expect(row.plan_graph.nodes).toHaveLength(4);
      const nodes = await h.db.pool.query(`SELECT node_key, status, attempt, attempt_limit FROM node_runs WHERE run_id = $1 ORDER BY node_key`, [runId]);
      expect(nodes.rows).toEqual([
        { node_key: 'gate', status: 'Pending', attempt: 0, attempt_limit: 1 },
        { node_key: 'no', status: 'Pending', attempt: 0, attempt_limit: 1 },
        { node_key: 'start', status: 'Pending', attempt: 0, attempt_limit: 1 },
        { node_key: 'yes', status: 'Pending', attempt: 0, attempt_limit: 1 },
      ]);
      const events = await h.db.pool.query(`SELECT seq, kind FROM events WHERE run_id = $1`, [runId]);
      expect(events.rows).toEqual([{ seq: 1, kind: 'run.created' }]);
      // the owner of the run's shard alone hears it (issue #19)
      await waitFor(() => woken.includes(`${shardWakeChannel(row.shard as number, h.prefix)} ${runId}`), { timeoutMs: 5000 });
      expect(woken.filter((w) => w.endsWith(runId))).toHaveLength(1);
      // it names the run's tenant, so the owner orders its ticks fairly before reading the run (issue #16)
      const tenant = await h.db.pool.query<{ tenant_id: string }>(`SELECT tenant_id FROM runs WHERE id = $1`, [runId]);
      expect(tenants[runId]).toBe(tenant.rows[0]!.tenant_id);
    } finally {
      sub.disconnect();
    }
  });

  it('replays the same runId for the same requestId (body or Idempotency-Key header)', async () => {
    const defId = await createDefinition(h, lineGraph(), 'idem');
    const a = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'req-1' } });
    const b = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'req-1' } });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body.runId).toBe(a.body.runId);
    const c = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {}, headers: { 'idempotency-key': 'hdr-1' } });
    const d = await h.call('POST', `/v1/definitions/${defId}/runs`, { headers: { 'idempotency-key': 'hdr-1' } });
    expect(d.status).toBe(202);
    expect(d.body.runId).toBe(c.body.runId);
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [a.body.runId]);
    const afterEnd = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'req-1' } });
    expect(afterEnd.body.runId).toBe(a.body.runId);
  });

  it('creates exactly one run for concurrent double POSTs with the same requestId', async () => {
    const defId = await createDefinition(h, lineGraph(), 'race');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => h.call('POST', `/v1/definitions/${defId}/runs`, { body: { requestId: 'race-1' } })),
    );
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    expect(new Set(results.map((r) => r.body.runId)).size).toBe(1);
    const count = await h.db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE request_id = 'race-1'`);
    expect(count.rows[0].n).toBe(1);
  });

  it('answers 409 RequestIdReused when the requestId started a run of another definition', async () => {
    const one = await createDefinition(h, lineGraph(), 'one');
    const two = await createDefinition(h, lineGraph(), 'two');
    await startRun(h, one, { requestId: 'shared' });
    const r = await h.call('POST', `/v1/definitions/${two}/runs`, { body: { requestId: 'shared' } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('RequestIdReused');
  });

  it('refuses an input over MAX_RUN_INPUT_BYTES counted in UTF-8 bytes', async () => {
    const defId = await createDefinition(h, lineGraph(), 'big');
    // 400 × "é" is 400 characters but 800 bytes, plus the quotes and key: under 1000 bytes
    const fits = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { s: 'é'.repeat(400) } } });
    expect(fits.status).toBe(202);
    const over = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { s: 'é'.repeat(500) } } });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('InputTooLarge');
  });

  it('stores a number written with an exponent in its own short form, and judges the cap on what is stored', async () => {
    const defId = await createDefinition(h, lineGraph(), 'exponent');
    const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { raw: '{"input":{"x":1e131071}}' });
    expect(r.status).toBe(202);
    const stored = await h.db.pool.query<{ n: number; t: string }>(`SELECT length(input::text) AS n, left(input::text, 200) AS t FROM runs WHERE id = $1`, [r.body.runId]);
    expect(stored.rows[0]!.n).toBeLessThan(100);
    expect(stored.rows[0]!.t).toContain('1e131071');
    // the stored form of a document keeping such a number is what MAX_RUN_INPUT_BYTES (1000 here)
    // counts: 300 quotes are 600 bytes of input text, written out twice over in the stored text
    const quotes = JSON.stringify('"'.repeat(300));
    expect((await h.call('POST', `/v1/definitions/${defId}/runs`, { raw: `{"input":{"s":${quotes}}}` })).status).toBe(202);
    const over = await h.call('POST', `/v1/definitions/${defId}/runs`, { raw: `{"input":{"s":${quotes},"n":1e400}}` });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('InputTooLarge');
  });

  it('refuses an input failing the graph inputSchema or the Start inputSchema, and starts no run', async () => {
    const graphLevel = await createDefinition(h, lineGraph({ inputSchema: { type: 'object', required: ['q'] } }), 'schema');
    const r1 = await h.call('POST', `/v1/definitions/${graphLevel}/runs`, { body: { input: { x: 1 } } });
    expect(r1.status).toBe(400);
    expect(r1.body.error.code).toBe('InputInvalid');
    const startLevel = await createDefinition(h, pauseGraph(), 'start-schema');
    const r2 = await h.call('POST', `/v1/definitions/${startLevel}/runs`, { body: { input: { n: 'not a number' }, requestId: 'bad-in' } });
    expect(r2.status).toBe(400);
    expect(r2.body.error.details[0].key).toBe('start.config.inputSchema');
    const none = await h.db.pool.query(`SELECT 1 FROM runs WHERE request_id = 'bad-in'`);
    expect(none.rowCount).toBe(0);
  });

  it('answers a run start against an exponential pattern quickly, whatever the input length (patterns run on RE2)', async () => {
    const evil = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    const graph = lineGraph({ inputSchema: evil });
    graph.nodes[0] = { key: 'start', kind: 'Start', config: { inputSchema: evil } } as never;
    const defId = await createDefinition(h, graph, 'redos');
    for (const n of [30, 900]) {
      const began = performance.now();
      const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { name: `${'a'.repeat(n)}!` } } });
      // a liveness bound: the backtracking engine takes minutes at 30 characters
      expect(performance.now() - began).toBeLessThan(2_000);
      expect(r.status).toBe(400);
      expect(r.body.error.details.map((d: { key: string }) => d.key)).toEqual(['inputSchema', 'start.config.inputSchema']);
    }
    expect((await h.call('POST', `/v1/definitions/${defId}/runs`, { body: { input: { name: 'a'.repeat(900) } } })).status).toBe(202);
  });

  it('refuses a definition whose pattern RE2 cannot run, keyed to the node with the pattern’s schema path', async () => {
    const graph = lineGraph();
    graph.nodes[0] = { key: 'start', kind: 'Start', config: { inputSchema: { properties: { x: { pattern: '(a)\\1' } } } } } as never;
    const r = await h.call('POST', '/v1/definitions', { body: { name: 'backref', graph } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details).toEqual([
      { key: 'start', message: expect.stringContaining('config.inputSchema is not a valid JSON Schema: /properties/x/pattern is refused') },
    ]);
  });

  it('refuses a named backreference at validation instead of matching it as literal text', async () => {
    const graph = lineGraph();
    graph.nodes[0] = { key: 'start', kind: 'Start', config: { inputSchema: { properties: { x: { pattern: '^(?<n>a)\\k<n>$' } } } } } as never;
    const r = await h.call('POST', '/v1/definitions', { body: { name: 'named-backref', graph } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('GraphInvalid');
    expect(r.body.error.details).toEqual([
      { key: 'start', message: expect.stringMatching(/config\.inputSchema is not a valid JSON Schema: \/properties\/x\/pattern is refused.*backreference/) },
    ]);
  });

  it('answers 404 for an unknown, malformed or other-tenant definition', async () => {
    const defId = await createDefinition(h, lineGraph(), 'mine');
    expect((await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {}, token: KEYS.b })).status).toBe(404);
    expect((await h.call('POST', '/v1/definitions/00000000-0000-4000-8000-000000000000/runs', { body: {} })).status).toBe(404);
    expect((await h.call('POST', '/v1/definitions/nope/runs', { body: {} })).status).toBe(404);
  });
});

describe('reading runs', () => {
  it('returns {run, nodeRuns, output, graph} with the exact summary shapes and the pinned graph', async () => {
    const defId = await createDefinition(h, pauseGraph(), 'read');
    const runId = await startRun(h, defId, { requestId: 'read-1' });
    await h.call('PUT', `/v1/definitions/${defId}`, { body: { graph: lineGraph(), version: 1 } });
    const r = await h.call('GET', `/v1/runs/${runId}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['graph', 'nodeRuns', 'output', 'run']);
    expect(Object.keys(r.body.run).sort()).toEqual(RUN_SUMMARY_KEYS);
    expect(r.body.run).toMatchObject({ id: runId, definitionId: defId, status: 'Pending', failureClass: 'None', paused: false, requestId: 'read-1', startedAt: null, lastSeq: 1 });
    expect(r.body.output).toBeNull();
    expect(r.body.graph).toEqual(pauseGraph());
    expect(r.body.nodeRuns.map((n: { nodeKey: string }) => n.nodeKey)).toEqual(['start', 'gate', 'yes', 'no']);
    expect(Object.keys(r.body.nodeRuns[0]).sort()).toEqual(
      ['nodeKey', 'kind', 'status', 'attempt', 'failureClass', 'reason', 'pendingDecisionKind', 'childRunId', 'startedAt', 'finishedAt', 'reusedFrom'].sort(),
    );
    expect((await h.call('GET', `/v1/runs/${runId}`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', '/v1/runs/xyz')).status).toBe(404);
  });

  it('returns a node run with its documents, and 404 for an unknown node', async () => {
    const defId = await createDefinition(h, pauseGraph(), 'node');
    const runId = await startRun(h, defId);
    await h.db.pool.query(
      `UPDATE node_runs SET status = 'Succeeded', attempt = 1, output = $2::jsonb,
         steering = '[{"operationId":"s1","message":"be brief","atUtc":0,"attempt":1,"applied":true}]'::jsonb
       WHERE run_id = $1 AND node_key = 'start'`,
      [runId, JSON.stringify({ status: 'succeeded', attempt: 1, branch: null, output: { input: {} } })],
    );
    const r = await h.call('GET', `/v1/runs/${runId}/nodes/start`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      nodeKey: 'start', kind: 'Start', status: 'Succeeded', attempt: 1, failureClass: 'None', input: null, error: null,
      output: { status: 'succeeded', attempt: 1, branch: null, output: { input: {} } },
      steering: [{ operationId: 's1', message: 'be brief', atUtc: '1970-01-01T00:00:00.000Z', attempt: 1, applied: true }],
      childRunId: null, notBefore: null,
    });
    expect((await h.call('GET', `/v1/runs/${runId}/nodes/nope`)).status).toBe(404);
    expect((await h.call('GET', `/v1/runs/${runId}/nodes/start`, { token: KEYS.b })).status).toBe(404);
  });

  it('lists runs newest first, filtered by status and definitionId, with a cursor', async () => {
    const defId = await createDefinition(h, lineGraph(), 'list', KEYS.b);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await h.call('POST', `/v1/definitions/${defId}/runs`, { body: {}, token: KEYS.b });
      ids.push(r.body.runId);
    }
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [ids[0]]);
    const page1 = await h.call('GET', `/v1/runs?definitionId=${defId}&limit=2`, { token: KEYS.b });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(Object.keys(page1.body.items[0]).sort()).toEqual(RUN_SUMMARY_KEYS);
    const page2 = await h.call('GET', `/v1/runs?definitionId=${defId}&limit=2&cursor=${page1.body.nextCursor}`, { token: KEYS.b });
    expect(page2.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    const completed = await h.call('GET', '/v1/runs?status=Completed', { token: KEYS.b });
    expect(completed.body.items.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    const mine = await h.call('GET', `/v1/runs?definitionId=${defId}`);
    expect(mine.body.items).toEqual([]);
    expect((await h.call('GET', '/v1/runs?status=Bogus')).status).toBe(400);
  });

  it('lists only the runs of one conversation with conversationId, combined with the other filters', async () => {
    const defId = await createDefinition(h, lineGraph(), 'conversation-filter');
    const conv = `conv-${defId}`;
    const bound = await startRun(h, defId, { conversationId: conv });
    await startRun(h, defId);
    await startRun(h, defId, { conversationId: `${conv}-other` });
    const only = await h.call('GET', `/v1/runs?conversationId=${encodeURIComponent(conv)}`);
    expect(only.body.items.map((r: { id: string; conversationId: string }) => [r.id, r.conversationId])).toEqual([[bound, conv]]);
    const both = await h.call('GET', `/v1/runs?conversationId=${encodeURIComponent(conv)}&definitionId=${defId}&status=Pending`);
    expect(both.body.items.map((r: { id: string }) => r.id)).toEqual([bound]);
    expect((await h.call('GET', `/v1/runs?conversationId=${encodeURIComponent(conv)}&status=Completed`)).body.items).toEqual([]);
    // another tenant's conversation of the same id shows nothing; an id no conversation can have matches nothing
    expect((await h.call('GET', `/v1/runs?conversationId=${encodeURIComponent(conv)}`, { token: KEYS.b })).body.items).toEqual([]);
    expect((await h.call('GET', `/v1/runs?conversationId=${'x'.repeat(129)}`)).body).toEqual({ items: [], nextCursor: null });
  });
});

describe('events', () => {
  it('pages events after an exclusive afterSeq, capped, with truncated read one row past the limit', async () => {
    const defId = await createDefinition(h, lineGraph(), 'events');
    const runId = await startRun(h, defId);
    await h.db.pool.query(
      `INSERT INTO events (run_id, seq, kind, node_key, detail)
       SELECT $1, s, 'node.queued', 'start', '{}'::jsonb FROM generate_series(2, 5) s`,
      [runId],
    );
    await h.db.pool.query(`UPDATE runs SET last_seq = 5 WHERE id = $1`, [runId]);
    const all = await h.call('GET', `/v1/runs/${runId}/events`);
    expect(all.status).toBe(200);
    expect(all.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.body).toMatchObject({ limit: 200, truncated: false });
    expect(all.body.events[0]).toEqual({ seq: 1, kind: 'run.created', nodeKey: null, at: expect.any(String), detail: expect.any(Object) });
    const page = await h.call('GET', `/v1/runs/${runId}/events?afterSeq=1&limit=2`);
    expect(page.body.events.map((e: { seq: number }) => e.seq)).toEqual([2, 3]);
    expect(page.body).toMatchObject({ limit: 2, truncated: true });
    const exact = await h.call('GET', `/v1/runs/${runId}/events?afterSeq=3&limit=2`);
    expect(exact.body.events.map((e: { seq: number }) => e.seq)).toEqual([4, 5]);
    expect(exact.body.truncated).toBe(false);
    const capped = await h.call('GET', `/v1/runs/${runId}/events?limit=99999`);
    expect(capped.body.limit).toBe(200);
    expect((await h.call('GET', `/v1/runs/${runId}/events`, { token: KEYS.b })).status).toBe(404);
  });
});

describe('cancel', () => {
  it('moves a live run to Cancelling with one cancel intent and answers 202 idempotently', async () => {
    const defId = await createDefinition(h, lineGraph(), 'cancel');
    const runId = await startRun(h, defId);
    const before = await h.db.pool.query(`SELECT version FROM runs WHERE id = $1`, [runId]);
    const r = await h.call('POST', `/v1/runs/${runId}/cancel`, { body: { reason: 'stop' } });
    expect(r.status).toBe(202);
    const row = await h.db.pool.query(`SELECT status, cancel_reason, version, wake_at FROM runs WHERE id = $1`, [runId]);
    expect(row.rows[0]).toMatchObject({ status: 'Cancelling', cancel_reason: 'stop', version: before.rows[0].version + 1 });
    expect(row.rows[0].wake_at).not.toBeNull();
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);
    const intents = await h.db.pool.query(`SELECT kind, payload FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rows).toEqual([{ kind: 'cancel', payload: { reason: 'stop' } }]);
    expect((await h.call('GET', `/v1/runs/${runId}`)).body.run.status).toBe('Cancelling');
  });

  it('answers 202 without effect on a finished run, and 404 for another tenant', async () => {
    const defId = await createDefinition(h, lineGraph(), 'done');
    const runId = await startRun(h, defId);
    await h.db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('POST', `/v1/runs/${runId}/cancel`)).status).toBe(202);
    const row = await h.db.pool.query(`SELECT status FROM runs WHERE id = $1`, [runId]);
    expect(row.rows[0].status).toBe('Completed');
    const intents = await h.db.pool.query(`SELECT 1 FROM intents WHERE run_id = $1`, [runId]);
    expect(intents.rowCount).toBe(0);
  });
});
