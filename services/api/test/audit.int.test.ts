/**
 * The audit log over REST against real Postgres and Redis: rows naming the principal and the
 * outcome, a definition change's redacted JSON Patch, the hash chain (an edited or deleted row
 * makes verify fail at its seq), filters and cursor, NDJSON export, and retention's checkpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { keyDigest, principalIdOf } from '../src/auth';
import { AuditChainer } from '../src/audit/chainer';
import { KEYS, createDefinition, lineGraph, pauseGraph, startHarness, startRun, type Harness } from './harness';

const READ_ONLY = 'key-tenant-a-read';
let h: Harness;
const principalA = principalIdOf(keyDigest(KEYS.a));

beforeAll(async () => {
  h = await startHarness({}, new Map<string, string | { tenant: string; scopes: ('read' | 'run' | 'operate' | 'define' | 'audit' | 'admin')[] }>([
    [KEYS.a, 'tenantA'],
    [KEYS.b, 'tenantB'],
    [READ_ONLY, { tenant: 'tenantA', scopes: ['read'] }],
  ]));
});
afterAll(() => h.close());

const rowsOf = async (tenant: string) =>
  (await h.db.pool.query(`SELECT * FROM audit_log WHERE tenant_id = $1 ORDER BY seq NULLS LAST, id`, [tenant])).rows;
/** `fn`'s value and the text of every statement the API sent through its pool meanwhile (passed through unchanged). */
async function statementsDuring<T>(fn: () => Promise<T>): Promise<{ value: T; sent: string[] }> {
  const sent: string[] = [];
  const pool = h.db.pool as unknown as { query: (...args: unknown[]) => unknown };
  const query = pool.query;
  pool.query = (...args: unknown[]) => {
    const q = args[0] as string | { text: string };
    sent.push(typeof q === 'string' ? q : q.text);
    return query.apply(h.db.pool, args);
  };
  try {
    return { value: await fn(), sent };
  } finally {
    pool.query = query;
  }
}
const verify = async (token: string = KEYS.a) => (await h.call('GET', '/v1/audit/verify', { token })).body;

describe('audit rows', () => {
  it('records a definition change with the principal, outcome, request id and a redacted JSON Patch', async () => {
    const graph = lineGraph();
    const created = await h.call('POST', '/v1/definitions', { body: { name: 'audited', graph }, headers: { 'x-request-id': 'req-create-1' } });
    expect(created.status).toBe(201);
    expect(created.res.headers.get('x-request-id')).toBe('req-create-1');
    const id = created.body.id as string;
    const changed = {
      ...graph,
      // a free-form part of a graph (a schema's examples) holding what looks like credentials
      nodes: [
        { key: 'start', kind: 'Start', config: { inputSchema: { type: 'object', examples: [{ headers: { authorization: 'Bearer s3cr3t' }, token: 'tok-123' }] } } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
    };
    const put = await h.call('PUT', `/v1/definitions/${id}`, { body: { version: 1, name: 'renamed', graph: changed }, headers: { 'x-request-id': 'req-update-1' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);

    const list = await h.call('GET', `/v1/audit?resource=definition:${id}`);
    expect(list.status).toBe(200);
    const [update, create] = list.body.items;
    expect(create).toMatchObject({ action: 'definition.create', principal: principalA, resourceType: 'definition', resourceId: id, requestId: 'req-create-1', status: 201, errorCode: null, keyPrefix: null });
    expect(update).toMatchObject({ action: 'definition.update', principal: principalA, resourceId: id, requestId: 'req-update-1', status: 200 });
    expect(update.seq).toBe(create.seq + 1);
    expect(update.prevHash).toBe(create.hash);
    const patch = update.patch as { op: string; path: string; value?: unknown }[];
    expect(patch).toContainEqual({ op: 'replace', path: '/name', value: 'renamed' });
    const text = JSON.stringify(patch);
    expect(text).not.toContain('s3cr3t');
    expect(text).not.toContain('tok-123');
    // the paths are kept; only the values are hidden
    expect(text).toContain('[redacted]');
    expect(create.patch).toContainEqual({ op: 'add', path: '/name', value: 'audited' });
  });

  it('records a refused request once, with its status and error code', async () => {
    const forbidden = await h.call('POST', '/v1/definitions', { body: { name: 'x', graph: lineGraph() }, token: READ_ONLY, headers: { 'x-request-id': 'req-403' } });
    expect(forbidden.status).toBe(403);
    const missing = await h.call('POST', '/v1/runs/00000000-0000-4000-8000-000000000000/cancel', { body: {}, headers: { 'x-request-id': 'req-404' } });
    expect(missing.status).toBe(404);
    const rows = await rowsOf('tenantA');
    const r403 = rows.filter((r) => r.request_id === 'req-403');
    const r404 = rows.filter((r) => r.request_id === 'req-404');
    expect(r403).toHaveLength(1);
    expect(r403[0]).toMatchObject({ action: 'definition.create', status: 403, error_code: 'Forbidden', principal: principalIdOf(keyDigest(READ_ONLY)) });
    expect(r404).toHaveLength(1);
    expect(r404[0]).toMatchObject({ action: 'run.cancel', status: 404, error_code: 'NotFound', resource_id: '00000000-0000-4000-8000-000000000000' });
    // no key: no tenant to record it under
    const before = (await h.db.pool.query(`SELECT count(*)::int AS n FROM audit_log`)).rows[0].n;
    expect((await h.call('POST', '/v1/definitions', { body: {}, token: null })).status).toBe(401);
    expect((await h.db.pool.query(`SELECT count(*)::int AS n FROM audit_log`)).rows[0].n).toBe(before);
  });

  it('writes the row in the transaction of a run start and names the run', async () => {
    const def = await createDefinition(h, lineGraph());
    const runId = await startRun(h, def);
    const [row] = (await h.call('GET', `/v1/audit?action=run.start&resource=run:${runId}`)).body.items;
    expect(row).toMatchObject({ action: 'run.start', resourceType: 'run', resourceId: runId, status: 202 });
  });

  it('writes a run start row once, with its 202 and the run, in the statement that creates the run', async () => {
    const def = await createDefinition(h, lineGraph());
    const { value: runId, sent } = await statementsDuring(() => startRun(h, def));
    expect(sent.filter((t) => /audit_log/.test(t) && !/INSERT INTO runs/.test(t))).toEqual([]);
    const x = await h.db.pool.query(
      `SELECT a.status, a.resource_id FROM runs r JOIN audit_log a ON a.action = 'run.start' AND a.resource_id = r.id::text WHERE r.id = $1`,
      [runId],
    );
    expect(x.rows).toEqual([{ status: 202, resource_id: runId }]);
  });

  it('writes a gate decision row once, with its 202, in the statement that records the decision', async () => {
    const runId = await startRun(h, await createDefinition(h, pauseGraph()));
    await h.db.pool.query(`UPDATE runs SET status = 'WaitingForApproval' WHERE id = $1`, [runId]);
    await h.db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', attempt = 1 WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    const { value: r, sent } = await statementsDuring(() =>
      h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { body: { operationId: 'op-a', decision: 'Approve' } }),
    );
    expect(r.status).toBe(202);
    expect(sent.filter((t) => /audit_log/.test(t) && !/UPDATE node_runs/.test(t))).toEqual([]);
    const x = await h.db.pool.query(`SELECT status, resource_id FROM audit_log WHERE action = 'gate.decide' AND resource_id = $1`, [runId]);
    expect(x.rows).toEqual([{ status: 202, resource_id: runId }]);
  });

  it('keeps tenants apart and needs the audit scope', async () => {
    expect((await h.call('GET', '/v1/audit', { token: READ_ONLY })).status).toBe(403);
    const b = await h.call('GET', '/v1/audit', { token: KEYS.b });
    expect(b.status).toBe(200);
    expect(b.body.items).toEqual([]);
  });
});

describe('filters, cursor and export', () => {
  it('pages newest first with a cursor and filters by principal, action prefix and time', async () => {
    for (let i = 0; i < 5; i++) await createDefinition(h, lineGraph(), `page-${i}`);
    const all: { seq: number }[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: { seq: number }[]; nextCursor: string | null } } = await h.call('GET', `/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      all.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    const seqs = all.map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.length).toBe((await rowsOf('tenantA')).length);

    const defs = (await h.call('GET', '/v1/audit?action=definition.*&limit=200')).body.items as { action: string }[];
    expect(defs.length).toBeGreaterThan(5);
    expect(defs.every((r) => r.action.startsWith('definition.'))).toBe(true);
    const byPrincipal = (await h.call('GET', `/v1/audit?principal=${encodeURIComponent(principalIdOf(keyDigest(READ_ONLY)))}`)).body.items;
    expect(byPrincipal.map((r: { requestId: string }) => r.requestId)).toEqual(['req-403']);
    const future = (await h.call('GET', `/v1/audit?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.items;
    expect(future).toEqual([]);
    const past = (await h.call('GET', `/v1/audit?to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&limit=200`)).body.items;
    expect(past.length).toBe(seqs.length);
    expect((await h.call('GET', '/v1/audit?cursor=bm9wZQ')).status).toBe(400);
  });

  it('exports NDJSON oldest first, by route and by Accept', async () => {
    const res = await h.app.request('/v1/audit/export?action=definition.create', { headers: { authorization: `Bearer ${KEYS.a}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { seq: number; action: string });
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.every((l) => l.action === 'definition.create')).toBe(true);
    expect(lines.map((l) => l.seq)).toEqual([...lines.map((l) => l.seq)].sort((a, b) => a - b));
    const negotiated = await h.app.request('/v1/audit?action=definition.create', { headers: { authorization: `Bearer ${KEYS.a}`, accept: 'application/x-ndjson' } });
    expect((await negotiated.text()).trim().split('\n')).toHaveLength(lines.length);
  });
});

describe('the hash chain', () => {
  it('verifies, then fails at the seq of an edited row, a deleted row and a deleted newest row', async () => {
    const ok = await verify();
    expect(ok).toMatchObject({ ok: true, brokenAt: null, prunedSeq: 0 });
    expect(ok.checked).toBe(ok.headSeq);
    const rows = await rowsOf('tenantA');
    // an exact copy (microsecond times included) to put deleted rows back from
    await h.db.pool.query(`CREATE TABLE audit_copy AS SELECT * FROM audit_log`);
    const mid = rows[3];
    const client = h.db.pool;

    await client.query(`UPDATE audit_log SET action = 'definition.delete' WHERE id = $1`, [mid.id]);
    expect(await verify()).toMatchObject({ ok: false, brokenAt: Number(mid.seq), reason: 'hashMismatch' });
    await client.query(`UPDATE audit_log SET action = $2 WHERE id = $1`, [mid.id, mid.action]);
    expect((await verify()).ok).toBe(true);

    await client.query(`UPDATE audit_log SET status = 500 WHERE id = $1`, [mid.id]);
    expect(await verify()).toMatchObject({ ok: false, brokenAt: Number(mid.seq) });
    await client.query(`UPDATE audit_log SET status = $2 WHERE id = $1`, [mid.id, mid.status]);

    await client.query(`DELETE FROM audit_log WHERE id = $1`, [mid.id]);
    expect(await verify()).toMatchObject({ ok: false, brokenAt: Number(mid.seq), reason: 'missing' });
    await reinsert(mid);
    expect((await verify()).ok).toBe(true);

    const last = rows[rows.length - 1];
    await client.query(`DELETE FROM audit_log WHERE id = $1`, [last.id]);
    expect(await verify()).toMatchObject({ ok: false, brokenAt: Number(last.seq), reason: 'missing' });
    await reinsert(last);
    expect((await verify()).ok).toBe(true);
  });
});

describe('retention', () => {
  it('prunes rows older than the retention and verify starts from the checkpoint', async () => {
    const before = await rowsOf('tenantA');
    const keptFrom = new Date(Date.now() + 5);
    await new Promise((r) => setTimeout(r, 20));
    await createDefinition(h, lineGraph(), 'after-cutoff');
    await createDefinition(h, lineGraph(), 'after-cutoff-2');
    const chainer = new AuditChainer(h.db.pool, { retentionDays: 1, chainGraceS: 60, sweepMs: 60_000, chainDelayMs: 50 }, pino({ level: 'silent' }));
    // a sweep one day after `keptFrom`: every row before it is past a 1-day retention
    await chainer.sweep(new Date(keptFrom.getTime() + 86_400_000));
    const after = await rowsOf('tenantA');
    expect(after).toHaveLength(2);
    expect(after.every((r) => new Date(r.at).getTime() >= keptFrom.getTime() - 5)).toBe(true);
    const v = await verify();
    expect(v).toMatchObject({ ok: true, prunedSeq: Number(before[before.length - 1].seq), checked: 2 });
    const checkpoint = (await h.db.pool.query(`SELECT pruned_seq, pruned_hash FROM audit_chains WHERE tenant_id = 'tenantA'`)).rows[0];
    expect(checkpoint.pruned_hash).toBe(before[before.length - 1].hash);
    expect(after[0].prev_hash).toBe(checkpoint.pruned_hash);
    // the first kept row still has to link to the checkpoint
    await h.db.pool.query(`UPDATE audit_log SET prev_hash = 'x' WHERE id = $1`, [after[0].id]);
    expect(await verify()).toMatchObject({ ok: false, brokenAt: Number(after[0].seq), reason: 'prevHashMismatch' });
    await h.db.pool.query(`UPDATE audit_log SET prev_hash = $2 WHERE id = $1`, [after[0].id, after[0].prev_hash]);
    expect((await verify()).ok).toBe(true);
  });
});

/** Puts a deleted row back exactly as it was, from the copy taken before the tampering. */
async function reinsert(r: Record<string, unknown>): Promise<void> {
  await h.db.pool.query(`INSERT INTO audit_log SELECT * FROM audit_copy WHERE id = $1`, [r.id]);
}
