/**
 * Event triggers over REST against real Postgres and Redis: `POST /v1/events` starts one run per
 * subscribed definition an event matches, exactly once however the event is repeated, replayed
 * or fanned out again; `GET /v1/events/{id}` tells what each subscriber made of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { sweepEventFanout } from '../src/event-fanout';
import { KEYS, createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Events of the concurrent trial (EVENT_TRIGGER_BURST=1000 for the full one: 5,000 runs). */
const BURST = Number(process.env.EVENT_TRIGGER_BURST ?? 200);

const triggered = (triggers: unknown[], extra: Record<string, unknown> = {}) => lineGraph({ triggers, ...extra });

/** The runs of a definition (their request ids and inputs), oldest first. */
async function runsOf(definitionId: string): Promise<Array<{ request_id: string; input: unknown }>> {
  const r = await h.db.pool.query(`SELECT request_id, input FROM runs WHERE definition_id = $1 ORDER BY created_at`, [definitionId]);
  return r.rows;
}

describe('event triggers', () => {
  it('starts one run per matching subscriber with the mapped input; the same id again starts nothing new', async () => {
    const paid = await createDefinition(h, triggered([{ event: 'shop.order.*', filter: { path: 'data.total', op: 'Gte', value: 100 }, input: 'data.order' }]), 'big-orders');
    const all = await createDefinition(h, triggered([{ event: 'shop.*' }]), 'every-shop-event');
    const other = await createDefinition(h, triggered([{ event: 'billing.*' }]), 'billing');
    const body = [{ name: 'shop.order.paid', id: 'ord-1', data: { total: 150, order: { id: 'o-1' } } }];
    expect((await h.call('POST', '/v1/events', { body })).status).toBe(202);
    expect((await h.call('POST', '/v1/events', { body })).body).toMatchObject({ accepted: 0, duplicates: ['ord-1'] });
    expect(await runsOf(paid)).toEqual([{ request_id: `event:ord-1:${paid}`, input: { id: 'o-1' } }]);
    expect(await runsOf(all)).toEqual([{ request_id: `event:ord-1:${all}`, input: { total: 150, order: { id: 'o-1' } } }]);
    expect(await runsOf(other)).toEqual([]);

    const detail = (await h.call('GET', '/v1/events/ord-1')).body;
    expect(detail).toMatchObject({ id: 'ord-1', name: 'shop.order.paid', data: { total: 150 }, fanout: 'done' });
    expect(detail.matches.map((m: { definitionName: string; outcome: string; runId: string | null }) => [m.definitionName, m.outcome, m.runId !== null])).toEqual([
      ['big-orders', 'matched', true],
      ['every-shop-event', 'matched', true],
    ]);
  });

  it('reports a filter that does not hold and one that errors, with why', async () => {
    const def = await createDefinition(h, triggered([{ event: 'meter.read', filter: { path: 'data.kwh', op: 'Gt', value: 10 } }]), 'meter');
    await h.call('POST', '/v1/events', { body: [{ name: 'meter.read', id: 'm-low', data: { kwh: 3 } }, { name: 'meter.read', id: 'm-text', data: { kwh: 'twelve' } }] });
    expect(await runsOf(def)).toEqual([]);
    const low = (await h.call('GET', '/v1/events/m-low')).body.matches[0];
    expect(low).toMatchObject({ definitionId: def, outcome: 'notMatched', reason: 'triggers[0].filter: data.kwh Gt 10 is false', runId: null });
    const text = (await h.call('GET', '/v1/events/m-text')).body.matches[0];
    expect(text).toMatchObject({ outcome: 'filterError', runId: null });
    expect(text.reason).toContain('data.kwh is a string');
  });

  it('records a start the graph refuses (the input breaks the Start schema) as refused, with the code', async () => {
    const def = await createDefinition(h, triggered([{ event: 'strict.thing' }], { inputSchema: { type: 'object', required: ['must'] } }), 'strict');
    await h.call('POST', '/v1/events', { body: [{ name: 'strict.thing', id: 's-1', data: { nope: 1 } }] });
    const m = (await h.call('GET', '/v1/events/s-1')).body.matches[0];
    expect(m).toMatchObject({ definitionId: def, outcome: 'refused', runId: null });
    expect(m.reason).toMatch(/^InputInvalid: run input fails/);
  });

  it('replays an event to a definition published after it, once; a second replay answers the same run', async () => {
    await h.call('POST', '/v1/events', { body: [{ name: 'late.news', id: 'late-1', data: { n: 1 } }] });
    expect((await h.call('GET', '/v1/events/late-1')).body.matches).toEqual([]);
    const def = await createDefinition(h, triggered([{ event: 'late.*' }]), 'late-subscriber');
    const first = await h.call('POST', '/v1/events/late-1/replay', { body: { definitionIds: [def] } });
    expect(first.status).toBe(200);
    expect(first.body.matches).toEqual([{ definitionId: def, outcome: 'matched', reason: null, runId: expect.any(String) }]);
    const second = await h.call('POST', '/v1/events/late-1/replay', { body: {} });
    expect(second.body.matches[0].runId).toBe(first.body.matches[0].runId);
    expect(await runsOf(def)).toHaveLength(1);
    const unrelated = await createDefinition(h, lineGraph(), 'no-triggers');
    expect((await h.call('POST', '/v1/events/late-1/replay', { body: { definitionIds: [unrelated] } })).body.matches).toEqual([
      { definitionId: unrelated, outcome: 'notMatched', reason: "the definition has no trigger for 'late.news'", runId: null },
    ]);
    expect((await h.call('POST', '/v1/events/late-1/replay', { body: { definitionIds: ['nope'] } })).status).toBe(400);
    expect((await h.call('POST', '/v1/events/no-such/replay', { body: {} })).status).toBe(404);
    expect((await h.call('GET', '/v1/events/no-such')).status).toBe(404);
  });

  it("keeps tenants apart: another tenant's event starts none of this tenant's runs and is not readable here", async () => {
    const def = await createDefinition(h, triggered([{ event: 'tenant.scoped' }]), 'scoped');
    await h.call('POST', '/v1/events', { body: [{ name: 'tenant.scoped', id: 'b-1', data: {} }], token: KEYS.b });
    expect(await runsOf(def)).toEqual([]);
    expect((await h.call('GET', '/v1/events/b-1')).status).toBe(404);
    expect((await h.call('GET', '/v1/events/b-1', { token: KEYS.b })).body.matches).toEqual([]);
  });

  it('defers the starts a full backlog refuses and finishes them on a sweep once there is room', async () => {
    // a second replica whose tenant A may hold no Pending run: every start it tries is refused for now
    const tight = createApp({ ...h.deps, limits: { ...h.deps.limits, maxPendingRuns: () => 1 } });
    const def = await createDefinition(h, triggered([{ event: 'backlog.test' }]), 'backlogged');
    const pending = await h.db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'tenantA' AND status = 'Pending' AND parent_run_id IS NULL`);
    expect(pending.rows[0].n).toBeGreaterThanOrEqual(1);
    const res = await tight.request('/v1/events', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ name: 'backlog.test', id: 'bl-1', data: {} }]),
    });
    expect(res.status).toBe(202);
    const due = (await h.call('GET', '/v1/events/bl-1')).body;
    expect(due).toMatchObject({ fanout: 'due', matches: [{ definitionId: def, outcome: 'deferred', runId: null }] });
    // room again (the default replica has no bound): the sweep starts it
    await h.db.pool.query(`UPDATE inbound_events SET received_at = now() - interval '1 minute' WHERE id = 'bl-1'`);
    expect(await sweepEventFanout(h.deps, { minAgeMs: 10_000, batch: 100 })).toBeGreaterThanOrEqual(1);
    expect((await h.call('GET', '/v1/events/bl-1')).body).toMatchObject({ fanout: 'done', matches: [{ outcome: 'matched', runId: expect.any(String) }] });
    expect(await runsOf(def)).toHaveLength(1);
  });

  it(`starts exactly one run per (event, subscriber) when 5 subscribers take ${BURST} events posted concurrently, repeats included`, async () => {
    const defs = await Promise.all([0, 1, 2, 3, 4].map((i) => createDefinition(h, triggered([{ event: 'burst.*' }]), `burst-${i}`)));
    const events = Array.from({ length: BURST }, (_, i) => ({ name: 'burst.tick', id: `burst-${i}`, data: { i } }));
    const batches = Array.from({ length: Math.ceil(BURST / 10) }, (_, b) => events.slice(b * 10, b * 10 + 10));
    // every batch twice, all at once: the same ids race each other
    // a sender retries what admission control turns away (429 TooManyInFlight), as any client must
    const send = async (body: unknown) => {
      for (;;) {
        const a = await h.call('POST', '/v1/events', { body });
        if (a.status !== 429) return a;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    };
    const answers = await Promise.all([...batches, ...batches].map(send));
    expect(answers.filter((a) => a.status !== 202).map((a) => [a.status, a.body?.error?.code])).toEqual([]);
    const counts = await h.db.pool.query(
      `SELECT definition_id, count(*)::int AS n, count(DISTINCT request_id)::int AS d FROM runs WHERE definition_id = ANY($1::uuid[]) GROUP BY definition_id`,
      [defs],
    );
    expect(counts.rows.map((r) => [r.n, r.d])).toEqual(defs.map(() => [BURST, BURST]));
  }, 300_000);
});

describe('triggers in the graph', () => {
  it('refuses a malformed trigger when the definition is saved, keyed to the graph', async () => {
    const res = await h.call('POST', '/v1/definitions', { body: { name: 'bad', graph: triggered([{ event: 'has space' }]) } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('triggers[0].event');
  });

  it('listens for the new patterns after an update, and for none once they are removed', async () => {
    const def = await createDefinition(h, triggered([{ event: 'v1.only' }]), 'versioned');
    const v = (await h.call('GET', `/v1/definitions/${def}`)).body.version;
    const put = await h.call('PUT', `/v1/definitions/${def}`, { body: { version: v, graph: triggered([{ event: 'v2.only' }]) } });
    expect(put.status).toBe(200);
    await h.call('POST', '/v1/events', { body: [{ name: 'v1.only', id: 'ver-1' }, { name: 'v2.only', id: 'ver-2' }] });
    expect((await runsOf(def)).map((r) => r.request_id)).toEqual([`event:ver-2:${def}`]);
    await h.call('PUT', `/v1/definitions/${def}`, { body: { version: v + 1, graph: lineGraph() } });
    await h.call('POST', '/v1/events', { body: [{ name: 'v2.only', id: 'ver-3' }] });
    expect(await runsOf(def)).toHaveLength(1);
  });
});

describe('GET /v1/events', () => {
  it('lists the tenant events newest first with verdict counts, by name and received window, a page at a time', async () => {
    const def = await createDefinition(h, triggered([{ event: 'list.*', filter: { path: 'data.n', op: 'Gt', value: 1 } }]), 'list-subscriber');
    for (const [id, n] of [['l-1', 1], ['l-2', 2], ['l-3', 'three']] as const) {
      expect((await h.call('POST', '/v1/events', { body: [{ name: 'list.thing', id, data: { n } }] })).status).toBe(202);
    }
    await h.call('POST', '/v1/events', { body: [{ name: 'list.other', id: 'l-other' }] });
    const named = (await h.call('GET', '/v1/events?name=list.thing')).body;
    expect(named.items.map((e: { id: string }) => e.id)).toEqual(['l-3', 'l-2', 'l-1']);
    expect(named.items.map((e: { outcomes: unknown }) => e.outcomes)).toEqual([{ filterError: 1 }, { matched: 1 }, { notMatched: 1 }]);
    expect(named.items[0]).toMatchObject({ name: 'list.thing', ts: null, fanout: 'done', receivedAt: expect.any(String) });
    expect(named.nextCursor).toBeNull();
    expect(await runsOf(def)).toHaveLength(1);

    // a page at a time: each item once, in order
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = (await h.call('GET', `/v1/events?name=list.thing&limit=2${cursor ? `&cursor=${cursor}` : ''}`)).body;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(['l-3', 'l-2', 'l-1']);

    // the receivedAt window: from inclusive, to exclusive
    const at = named.items[1].receivedAt as string;
    const window = async (q: string) => (await h.call('GET', `/v1/events?name=list.thing&${q}`)).body.items.map((e: { id: string }) => e.id);
    expect(await window(`from=${encodeURIComponent(at)}`)).toEqual(['l-3', 'l-2']);
    expect(await window(`to=${encodeURIComponent(at)}`)).toEqual(['l-1']);
    expect((await h.call('GET', '/v1/events?limit=500')).body.items.map((e: { id: string }) => e.id)).toContain('l-other');

    // another tenant sees none of them; a malformed cursor or instant is a 400
    expect((await h.call('GET', '/v1/events?name=list.thing', { token: KEYS.b })).body.items).toEqual([]);
    expect((await h.call('GET', '/v1/events?cursor=bm9wZQ')).body.error).toMatchObject({ code: 'ValidationFailed' });
    expect((await h.call('GET', '/v1/events?from=yesterday')).body.error).toMatchObject({ code: 'ValidationFailed', details: [{ key: 'from' }] });
  });
});
