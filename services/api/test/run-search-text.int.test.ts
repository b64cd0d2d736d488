/**
 * `GET /v1/runs?q=` against real Postgres: a whole run id, an id prefix, and text in the
 * definition's name, the metadata and the reason; never another tenant's run; a bad `q` is a
 * keyed 400. Bulk actions take the same `q` in their filter (a dry run counts what the list shows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, lineGraph, startHarness, startRun, type Harness } from './harness';

let h: Harness;
let invoices: string;
let other: string;
let runA: string;
let runB: string;
let theirs: string;

beforeAll(async () => {
  h = await startHarness();
  invoices = await createDefinition(h, lineGraph(), 'Invoice Reconciler');
  other = await createDefinition(h, lineGraph(), 'mailer');
  runA = await startRun(h, invoices, { metadata: { customer: 'ACME-Corp', batch: 'nightly-42' } });
  runB = await startRun(h, other, { metadata: { customer: 'globex' } });
  const theirDef = await createDefinition(h, lineGraph(), 'Invoice Reconciler', KEYS.b);
  const res = await h.call('POST', `/v1/definitions/${theirDef}/runs`, { token: KEYS.b, body: { metadata: { customer: 'ACME-Corp' } } });
  theirs = res.body.runId as string;
  await h.db.pool.query(`UPDATE runs SET reason = 'quota exhausted at the gateway' WHERE id = $1`, [runB]);
});
afterAll(async () => {
  await h.close();
});

const ids = async (q: string, token: string = KEYS.a): Promise<string[]> => {
  const res = await h.call('GET', `/v1/runs?q=${encodeURIComponent(q)}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as Array<{ id: string }>).map((r) => r.id);
};

describe('GET /v1/runs?q=', () => {
  it('finds a run by its whole id (any case) and by a prefix of it, and only runs whose id starts with the prefix', async () => {
    expect(await ids(runA.toUpperCase())).toEqual([runA]);
    const prefix = runA.slice(0, 6);
    const found = await ids(prefix);
    expect(found).toContain(runA);
    expect(found.every((id) => id.startsWith(prefix))).toBe(true);
    expect(await ids(runA.slice(0, 11))).toEqual([runA]);
  });

  it("matches text case-insensitively in the definition's name, a metadata value or pair, and the reason", async () => {
    expect(await ids('invoice reconc')).toEqual([runA]);
    expect(await ids('acme-corp')).toEqual([runA]);
    expect(await ids('batch:nightly')).toEqual([runA]);
    expect(await ids('QUOTA EXHAUSTED')).toEqual([runB]);
    expect(await ids('no run says this')).toEqual([]);
    // LIKE wildcards match themselves only
    expect(await ids('%')).toEqual([]);
    expect(await ids('acme_corp')).toEqual([]);
  });

  it("never matches another tenant's run: not by id, prefix nor text", async () => {
    expect(await ids(theirs)).toEqual([]);
    expect(await ids(theirs.slice(0, 8))).not.toContain(theirs);
    expect(await ids('acme-corp')).not.toContain(theirs);
    expect(await ids('acme-corp', KEYS.b)).toEqual([theirs]);
  });

  it('ANDs q with the other members and counts the same runs in a bulk dry run', async () => {
    const res = await h.call('GET', `/v1/runs?q=acme&definitionId=${other}`);
    expect(res.body.items).toEqual([]);
    const dry = await h.call('POST', '/v1/runs/bulk', { body: { action: 'cancel', filter: { q: 'acme-corp' }, dryRun: true } });
    expect(dry.body).toEqual({ count: 1 });
  });

  it('refuses an empty, over-long or control-character q with 400 ValidationFailed keyed q', async () => {
    for (const q of ['  ', 'x'.repeat(201), 'a\u0001b']) {
      const res = await h.call('GET', `/v1/runs?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'q' }] });
    }
    const bulk = await h.call('POST', '/v1/runs/bulk', { body: { action: 'cancel', filter: { q: '' }, dryRun: true } });
    expect(bulk.status).toBe(400);
  });
});
