/**
 * Waitpoint tokens and the event intake over REST, against real Postgres and Redis. No dispatcher
 * runs here: each tick is the dispatcher's own load → plan → apply, done in-process, so the
 * tests see exactly what a committed tick does to a Wait.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, startHarness, startRun, tickRun, waitGraph, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** One dispatcher tick of `runId`, committed. */
const tick = (runId: string) => tickRun(h, runId);
const nodeW = async (runId: string) => (await h.call('GET', `/v1/runs/${runId}/nodes/w`)).body;
const post = (url: string, body: unknown) => h.call('POST', new URL(url).pathname, { body, token: null });

/** A run parked on a token Wait, with its token id and callback URL. */
async function parked(config: Record<string, unknown>): Promise<{ runId: string; id: string; url: string }> {
  const runId = await startRun(h, await createDefinition(h, waitGraph(config)));
  await tick(runId);
  const node = await nodeW(runId);
  expect(node.status).toBe('Running');
  const [wp] = node.waitpoints;
  return { runId, id: wp.id, url: wp.callbackUrl };
}

const PAID = { token: { timeout: 'PT1H', schema: { type: 'object', required: ['paid'] } } };

describe('waitpoint callback URLs', () => {
  it('carries the signed callback URL on the node, its blockers and its waitpoint.created event', async () => {
    const { runId, id, url } = await parked(PAID);
    expect(url).toMatch(new RegExp(`^http://localhost/w/${id}/[A-Za-z0-9_-]{43}$`));
    const events = (await h.call('GET', `/v1/runs/${runId}/events`)).body.events;
    expect(events.find((e: { kind: string }) => e.kind === 'waitpoint.created')).toMatchObject({ nodeKey: 'w', detail: { waitpointId: id, index: 0, callbackUrl: url } });
    // a live owner of every shard, so the blocker is the Wait's own (no dispatcher runs here)
    await h.db.pool.query(`INSERT INTO shard_leases (shard, owner, expires_at) SELECT g, 'd-test', now() + interval '1 hour' FROM generate_series(0, 15) g
                           ON CONFLICT (shard) DO UPDATE SET owner = 'd-test', expires_at = now() + interval '1 hour'`);
    const blockers = (await h.call('GET', `/v1/runs/${runId}/blockers`)).body.blockers;
    expect(blockers.find((b: { nodeKey: string }) => b.nodeKey === 'w')).toMatchObject({ kind: 'token', details: { waitpointId: id, callbackUrl: url, until: expect.any(String) } });
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body).toMatchObject({ id, runId, nodeKey: 'w', status: 'waiting', singleUse: true, callbackUrl: url });
  });

  it('never completes on a GET of the URL: 405 saying POST is required', async () => {
    const { runId, id, url } = await parked(PAID);
    const got = await h.call('GET', new URL(url).pathname, { token: null });
    expect(got.status).toBe(405);
    expect(got.res.headers.get('allow')).toBe('POST');
    expect(got.body.error.message).toContain('POST');
    const html = await h.call('GET', new URL(url).pathname, { token: null, headers: { accept: 'text/html' } });
    expect(html.status).toBe(405);
    expect(html.body).toContain('POST');
    await tick(runId);
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body.status).toBe('waiting');
    expect((await nodeW(runId)).status).toBe('Running');
  });

  it('answers 403 to a bad signature and changes nothing', async () => {
    const { id, url } = await parked(PAID);
    const forged = url.replace(/[^/]+$/, 'A'.repeat(43));
    expect(await post(forged, { paid: true })).toMatchObject({ status: 403, body: { error: { code: 'WaitpointSignatureInvalid' } } });
    const other = `${new URL(url).origin}/w/${randomUUID()}/${url.split('/').at(-1)}`;
    expect((await post(other, { paid: true })).status).toBe(403);
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body.status).toBe('waiting');
  });

  it('answers 422 to a body that breaks the schema and keeps the wait open', async () => {
    const { runId, id, url } = await parked(PAID);
    expect(await post(url, { nope: 1 })).toMatchObject({ status: 422, body: { error: { code: 'WaitpointPayloadInvalid' } } });
    await tick(runId);
    expect((await nodeW(runId)).status).toBe('Running');
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body).toMatchObject({ status: 'waiting', payload: null });
  });

  it('completes once: a replay answers 200 alreadyCompleted and changes nothing; the next tick fires the Wait on the first body', async () => {
    const { runId, id, url } = await parked(PAID);
    expect(await post(url, { paid: true })).toMatchObject({ status: 200, body: { completed: true, alreadyCompleted: false, waitpointId: id } });
    const version = async () => (await h.db.pool.query('SELECT version FROM runs WHERE id = $1', [runId])).rows[0].version;
    const before = await version();
    expect(await post(url, { paid: false })).toMatchObject({ status: 200, body: { completed: false, alreadyCompleted: true } });
    // a replay does not even judge its body
    expect(await post(url, 'not an object')).toMatchObject({ status: 200, body: { alreadyCompleted: true } });
    expect(await version()).toBe(before);
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body).toMatchObject({ status: 'completed', payload: { paid: true } });
    await tick(runId);
    const run = (await h.call('GET', `/v1/runs/${runId}`)).body;
    expect(run.run.status).toBe('Completed');
    expect(run.output).toMatchObject({ result: { fired: 'token', token: id, payload: { paid: true }, expired: false } });
    expect((await post(url, { paid: true })).body).toMatchObject({ alreadyCompleted: true });
  });

  it('answers 410 WaitpointExpired past the expiry, and the Wait then fires as expired', async () => {
    const { runId, id, url } = await parked({ token: { timeout: 'PT1H' } });
    await h.db.pool.query(`UPDATE waitpoints SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await h.db.pool.query(`UPDATE node_runs SET deadline_at = now() - interval '1 second' WHERE run_id = $1 AND node_key = 'w'`, [runId]);
    expect(await post(url, { late: true })).toMatchObject({ status: 410, body: { error: { code: 'WaitpointExpired' } } });
    expect((await h.call('GET', `/v1/waitpoints/${id}`)).body.status).toBe('expired');
    expect((await h.call('POST', `/v1/waitpoints/${id}/complete`, { body: { payload: {} } })).status).toBe(410);
    await tick(runId);
    expect((await nodeW(runId)).output.output).toMatchObject({ fired: 'token', token: id, payload: null, expired: true });
    expect((await post(url, {})).status).toBe(410);
  });

  it('revokes a waiting token with DELETE: its callback answers 410, a second DELETE 409, and its Wait fires revoked', async () => {
    const { runId, id, url } = await parked({ token: { timeout: 'PT1H' } });
    expect(await h.call('DELETE', `/v1/waitpoints/${id}`, { token: KEYS.b })).toMatchObject({ status: 404 });
    expect(await h.call('DELETE', `/v1/waitpoints/${id}`)).toMatchObject({ status: 200, body: { id, status: 'revoked' } });
    expect(await post(url, {})).toMatchObject({ status: 410, body: { error: { code: 'WaitpointRevoked' } } });
    expect(await h.call('DELETE', `/v1/waitpoints/${id}`)).toMatchObject({ status: 409, body: { error: { code: 'WaitpointNotWaiting' } } });
    await tick(runId);
    expect((await nodeW(runId)).output.output).toMatchObject({ fired: 'token', revoked: true });
  });

  it('completes with a key through POST /v1/waitpoints/{id}/complete and lists by run and status', async () => {
    const { runId, id } = await parked({ token: { timeout: 'PT1H' } });
    expect(await h.call('POST', `/v1/waitpoints/${id}/complete`, { body: { payload: { n: 1 } }, token: KEYS.b })).toMatchObject({ status: 404 });
    expect(await h.call('POST', `/v1/waitpoints/${id}/complete`, { body: { payload: { n: 1 } } })).toMatchObject({
      status: 200, body: { completed: true, alreadyCompleted: false, waitpoint: { id, status: 'completed', payload: { n: 1 } } },
    });
    const list = await h.call('GET', `/v1/waitpoints?runId=${runId}&status=completed`);
    expect(list.body).toEqual({ items: [expect.objectContaining({ id, status: 'completed' })], nextCursor: null });
    expect((await h.call('GET', `/v1/waitpoints?runId=${runId}&status=waiting`)).body.items).toEqual([]);
    expect((await h.call('GET', `/v1/waitpoints?runId=${runId}`, { token: KEYS.b })).body.items).toEqual([]);
  });

  it('withdraws the token when the timer of an any-Wait wins: its callback then answers 410', async () => {
    const runId = await startRun(h, await createDefinition(h, waitGraph({ any: [{ token: { timeout: 'PT1H' } }, { timer: 'PT1H' }] })));
    await tick(runId);
    const [wp] = (await nodeW(runId)).waitpoints;
    await h.db.pool.query(`UPDATE node_runs SET started_at = now() - interval '2 hours' WHERE run_id = $1 AND node_key = 'w'`, [runId]);
    await tick(runId);
    expect((await nodeW(runId)).output.output).toMatchObject({ kind: 'timer' });
    expect((await h.call('GET', `/v1/waitpoints/${wp.id}`)).body.status).toBe('revoked');
    expect((await post(wp.callbackUrl, {})).status).toBe(410);
  });
});

describe('POST /v1/events', () => {
  it('keeps events deduplicated by id, wakes a Wait on the name, which takes the one passing its filter', async () => {
    const g = waitGraph({ any: [{ event: 'payment.settled', filter: { path: 'data.order', op: 'Eq', value: 'o-7' } }, { timer: 'PT1H' }] });
    const runId = await startRun(h, await createDefinition(h, g));
    await tick(runId);
    const sent = await h.call('POST', '/v1/events', { body: [{ name: 'payment.settled', id: 'ev-1', data: { order: 'o-8' } }, { name: 'payment.settled', id: 'ev-2', data: { order: 'o-7' } }] });
    expect(sent).toMatchObject({ status: 202, body: { accepted: 2, ids: ['ev-1', 'ev-2'], duplicates: [] } });
    const again = await h.call('POST', '/v1/events', { body: [{ name: 'payment.settled', id: 'ev-2', data: { order: 'x' } }, { name: 'other' }] });
    expect(again.body).toMatchObject({ accepted: 1, duplicates: ['ev-2'] });
    expect(again.body.ids[1]).toEqual(expect.any(String));
    const due = await h.db.pool.query('SELECT wake_at <= now() AS due FROM runs WHERE id = $1', [runId]);
    expect(due.rows[0].due).toBe(true);
    await tick(runId);
    expect((await nodeW(runId)).output.output).toMatchObject({ kind: 'event', payload: { order: 'o-7' }, fired: [{ index: 0, kind: 'event', event: 'payment.settled', eventId: 'ev-2' }] });
  });

  it('refuses an empty list, a repeated id in one request and a malformed name', async () => {
    expect((await h.call('POST', '/v1/events', { body: [] })).status).toBe(400);
    expect((await h.call('POST', '/v1/events', { body: [{ name: 'a', id: 'x' }, { name: 'b', id: 'x' }] })).status).toBe(400);
    expect((await h.call('POST', '/v1/events', { body: [{ name: 'no spaces' }] })).status).toBe(400);
  });
});
