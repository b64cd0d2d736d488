/**
 * Schedule routes through the real app on real Postgres and Redis: create/upsert by key, read,
 * list, replace, delete, pause/resume, trigger, backfill (dry run and real), preview with UTC
 * offsets, the slot ledger, and the keyed errors (400 bad cron / time zone / policy, 404, 409).
 * Firing due slots is the dispatchers' (services/dispatcher/test/schedule-fire.int.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, createDefinition, lineGraph, pauseGraph, startHarness, type Harness } from './harness';

let h: Harness;
let defId: string;
beforeAll(async () => {
  h = await startHarness({ maxBackfillSlots: 30 });
  defId = await createDefinition(h, lineGraph(), 'nightly');
});
afterAll(async () => {
  await h.close();
});

const body = (extra: Record<string, unknown> = {}) => ({
  key: 'nightly',
  definitionId: defId,
  input: { region: 'eu' },
  metadata: { team: 'ops' },
  spec: { cron: '30 2 * * *', timezone: 'America/New_York' },
  policy: { overlap: 'skip', catchup: { window: 'PT2H', mode: 'latest' } },
  ...extra,
});

describe('POST /v1/schedules', () => {
  it('creates a schedule (201 with its id and next slot) and a POST with the same key updates it (200, same id)', async () => {
    const created = await h.call('POST', '/v1/schedules', { body: body() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      key: 'nightly',
      definitionId: defId,
      version: 'current',
      input: { region: 'eu' },
      metadata: { team: 'ops' },
      spec: { cron: '30 2 * * *', timezone: 'America/New_York' },
      policy: { overlap: 'skip', catchup: { window: 'PT2H', mode: 'latest' }, pauseOnFailure: false },
      paused: false,
      revision: 1,
    });
    expect(created.body.nextSlot.local).toMatch(/T02:30:00-0[45]:00$|T03:00:00-04:00$/);
    const again = await h.call('POST', '/v1/schedules', { body: body({ spec: { every: 'PT15M' } }) });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: created.body.id, spec: { every: 'PT15M', timezone: 'UTC' }, revision: 2 });
    const got = await h.call('GET', `/v1/schedules/${created.body.id}`);
    expect(got.body.spec).toEqual({ every: 'PT15M', timezone: 'UTC' });
  });

  it('answers 400 keyed by member for a bad cron, an unknown time zone, a bad policy, a bad key; 404 for an unknown definition', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ spec: { cron: '61 * * * *' } }, 'spec.cron'],
      [{ spec: { cron: '* * * *' } }, 'spec.cron'],
      [{ spec: { cron: '0 * * * *', timezone: 'Mars/Olympus' } }, 'spec.timezone'],
      [{ spec: { every: 'P1M' } }, 'spec.every'],
      [{ policy: { overlap: 'sometimes' } }, 'policy.overlap'],
      [{ policy: { catchup: { window: 'PT1H', mode: 'first' } } }, 'policy.catchup.mode'],
      [{ key: '-bad key' }, 'key'],
      [{ version: 7 }, 'version'],
    ];
    for (const [extra, key] of cases) {
      const r = await h.call('POST', '/v1/schedules', { body: body({ key: 'bad', ...extra }) });
      expect({ extra, status: r.status, code: r.body.error?.code, keys: r.body.error?.details?.map((d: { key: string }) => d.key) }).toEqual({ extra, status: 400, code: 'ValidationFailed', keys: [key] });
    }
    const missing = await h.call('POST', '/v1/schedules', { body: body({ key: 'bad', definitionId: '00000000-0000-4000-8000-000000000000' }) });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NotFound']);
    expect((await h.call('GET', '/v1/schedules')).body.items.map((s: { key: string }) => s.key)).not.toContain('bad');
  });

  it('checks the input against the graph input schema when written', async () => {
    const gated = await createDefinition(h, pauseGraph(), 'gated');
    const r = await h.call('POST', '/v1/schedules', { body: body({ key: 'gated', definitionId: gated, input: { n: 'not a number' } }) });
    expect([r.status, r.body.error.code]).toEqual([400, 'InputInvalid']);
  });
});

describe('a pinned version', () => {
  it('starts runs of the pinned version after the definition moved on, and of the current one with version current', async () => {
    const id = await createDefinition(h, lineGraph(), 'pinned');
    const v2 = {
      nodes: [{ key: 'start', kind: 'Start' }, { key: 'mid', kind: 'Tool', config: { toolName: 'echo', arguments: {} } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
      edges: [{ key: 'e1', from: 'start', to: 'mid' }, { key: 'e2', from: 'mid', to: 'end' }],
    };
    expect((await h.call('PUT', `/v1/definitions/${id}`, { body: { graph: v2, version: 1 } })).status).toBe(200);
    const pinned = (await h.call('POST', '/v1/schedules', { body: body({ key: 'pinned-v1', definitionId: id, version: 1, input: undefined }) })).body;
    expect(pinned.version).toBe(1);
    const current = (await h.call('POST', '/v1/schedules', { body: body({ key: 'pinned-current', definitionId: id, input: undefined }) })).body;
    const one = await h.call('POST', `/v1/schedules/${pinned.id}/trigger`);
    const two = await h.call('POST', `/v1/schedules/${current.id}/trigger`);
    const runOne = (await h.call('GET', `/v1/runs/${one.body.runId}`)).body;
    const runTwo = (await h.call('GET', `/v1/runs/${two.body.runId}`)).body;
    expect(runOne.run.definitionVersion).toBe(1);
    expect(runOne.nodeRuns.map((n: { nodeKey: string }) => n.nodeKey)).toEqual(['start', 'end']);
    expect(runTwo.run.definitionVersion).toBe(2);
    expect(runTwo.nodeRuns.map((n: { nodeKey: string }) => n.nodeKey)).toEqual(['start', 'mid', 'end']);
  });

  it('names an alias resolved at each start: unknown or with a version number 400 keyed alias; deleted later, the start is refused with the reason', async () => {
    const id = await createDefinition(h, lineGraph(), 'aliased');
    const v2 = {
      nodes: [{ key: 'start', kind: 'Start' }, { key: 'mid', kind: 'Tool', config: { toolName: 'echo', arguments: {} } }, { key: 'end', kind: 'End', config: { outcome: 'done' } }],
      edges: [{ key: 'e1', from: 'start', to: 'mid' }, { key: 'e2', from: 'mid', to: 'end' }],
    };
    expect((await h.call('PUT', `/v1/definitions/${id}`, { body: { graph: v2, version: 1 } })).status).toBe(200);
    for (const extra of [{ alias: 'canary' }, { alias: 'canary', version: 1 }]) {
      const r = await h.call('POST', '/v1/schedules', { body: body({ key: 'aliased', definitionId: id, input: undefined, ...extra }) });
      expect({ status: r.status, code: r.body.error?.code, keys: r.body.error?.details?.map((d: { key: string }) => d.key) }).toEqual({ status: 400, code: 'ValidationFailed', keys: ['alias'] });
    }
    expect((await h.call('PUT', `/v1/definitions/${id}/aliases/canary`, { body: { version: 1 } })).status).toBe(200);
    const created = await h.call('POST', '/v1/schedules', { body: body({ key: 'aliased', definitionId: id, input: undefined, alias: 'canary' }) });
    expect(created.body).toMatchObject({ version: 'current', alias: 'canary' });
    const run = await h.call('POST', `/v1/schedules/${created.body.id}/trigger`);
    expect((await h.call('GET', `/v1/runs/${run.body.runId}`)).body.run.definitionVersion).toBe(1);
    // moving the alias moves the next start
    expect((await h.call('PUT', `/v1/definitions/${id}/aliases/canary`, { body: { version: 2 } })).status).toBe(200);
    const moved = await h.call('POST', `/v1/schedules/${created.body.id}/trigger`);
    expect((await h.call('GET', `/v1/runs/${moved.body.runId}`)).body.run.definitionVersion).toBe(2);
    expect((await h.call('DELETE', `/v1/definitions/${id}/aliases/canary`)).status).toBe(204);
    const refused = await h.call('POST', `/v1/schedules/${created.body.id}/trigger`);
    expect({ status: refused.status, code: refused.body.error?.code, message: refused.body.error?.message }).toEqual({
      status: 409,
      code: 'ScheduleStartRefused',
      message: "the definition has no alias 'canary' any more",
    });
  });
});

describe('reads, replace, delete', () => {
  it('lists the tenant’s schedules only, gets 404 for another tenant’s, replaces by id (409 onto a taken key), deletes (204, then 404)', async () => {
    const a = (await h.call('POST', '/v1/schedules', { body: body({ key: 'a' }) })).body;
    const b = (await h.call('POST', '/v1/schedules', { body: body({ key: 'b' }) })).body;
    expect((await h.call('GET', `/v1/schedules/${a.id}`, { token: KEYS.b })).status).toBe(404);
    expect((await h.call('GET', '/v1/schedules', { token: KEYS.b })).body.items).toEqual([]);
    const page = await h.call('GET', '/v1/schedules?limit=1');
    expect(page.body.items).toHaveLength(1);
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const next = await h.call('GET', `/v1/schedules?limit=1&cursor=${page.body.nextCursor}`);
    expect(next.body.items[0].id).not.toBe(page.body.items[0].id);
    const replaced = await h.call('PUT', `/v1/schedules/${a.id}`, { body: body({ key: 'a2', policy: { overlap: 'allowAll' } }) });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: a.id, key: 'a2', policy: { overlap: 'allowAll' } });
    const taken = await h.call('PUT', `/v1/schedules/${a.id}`, { body: body({ key: 'b' }) });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'ScheduleKeyTaken']);
    expect((await h.call('DELETE', `/v1/schedules/${b.id}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/schedules/${b.id}`)).status).toBe(404);
    expect((await h.call('DELETE', `/v1/schedules/${b.id}`)).status).toBe(404);
    expect((await h.call('GET', '/v1/schedules/not-a-uuid')).status).toBe(404);
  });
});

describe('pause, resume, trigger, preview, backfill and the ledger', () => {
  it('pauses (no next slot, the reason kept) and resumes (a next slot again)', async () => {
    const s = (await h.call('POST', '/v1/schedules', { body: body({ key: 'p' }) })).body;
    const paused = await h.call('POST', `/v1/schedules/${s.id}/pause`, { body: { reason: 'maintenance' } });
    expect(paused.body).toMatchObject({ paused: true, pausedReason: 'maintenance', nextSlot: null });
    const resumed = await h.call('POST', `/v1/schedules/${s.id}/resume`);
    expect(resumed.body).toMatchObject({ paused: false, pausedReason: null, nextSlot: expect.any(Object) });
  });

  it('triggers a run now with the schedule’s input and metadata, request id schedule:<id>:<slot>, recorded in the ledger', async () => {
    const s = (await h.call('POST', '/v1/schedules', { body: body({ key: 't' }) })).body;
    const t = await h.call('POST', `/v1/schedules/${s.id}/trigger`);
    expect(t.status).toBe(202);
    const run = (await h.call('GET', `/v1/runs/${t.body.runId}`)).body.run;
    expect(run).toMatchObject({ scheduleId: s.id, requestId: `schedule:${s.id}:${t.body.slotAt}`, metadata: { team: 'ops' } });
    const input = await h.db.pool.query<{ input: unknown }>(`SELECT input FROM runs WHERE id = $1`, [t.body.runId]);
    expect(input.rows[0]!.input).toEqual({ region: 'eu' });
    const ledger = await h.call('GET', `/v1/schedules/${s.id}/slots`);
    expect(ledger.body.items).toEqual([{ slotAt: t.body.slotAt, source: 'trigger', outcome: 'started', runId: t.body.runId, reason: null, decidedAt: expect.any(String) }]);
    expect((await h.call('POST', `/v1/schedules/00000000-0000-4000-8000-000000000000/trigger`)).status).toBe(404);
  });

  it('previews the next slots with their UTC offsets across the spring-forward', async () => {
    const s = (await h.call('POST', '/v1/schedules', { body: body({ key: 'dst', spec: { cron: '30 2 * * *', timezone: 'America/New_York', startAt: '2030-03-09T00:00:00Z' } }) })).body;
    const p = await h.call('GET', `/v1/schedules/${s.id}/preview?count=3`);
    expect(p.body).toEqual({
      timezone: 'America/New_York',
      slots: [
        { at: '2030-03-09T07:30:00.000Z', local: '2030-03-09T02:30:00-05:00', utcOffset: '-05:00' },
        { at: '2030-03-10T07:00:00.000Z', local: '2030-03-10T03:00:00-04:00', utcOffset: '-04:00' },
        { at: '2030-03-11T06:30:00.000Z', local: '2030-03-11T02:30:00-04:00', utcOffset: '-04:00' },
      ],
    });
    expect((await h.call('GET', `/v1/schedules/${s.id}/preview?count=500`)).status).toBe(400);
  });

  it('backfills a past span: a dry run lists the slots, a real one starts one run per slot not yet recorded; past MAX_BACKFILL_SLOTS 400', async () => {
    const s = (await h.call('POST', '/v1/schedules', { body: body({ key: 'bf', spec: { every: 'PT1H' }, policy: { overlap: 'allowAll' } }) })).body;
    const span = { from: '2026-01-01T00:00:00Z', to: '2026-01-01T03:00:00Z' };
    const dry = await h.call('POST', `/v1/schedules/${s.id}/backfill`, { body: { ...span, dryRun: true } });
    expect(dry.body.slots.map((x: { outcome: string }) => x.outcome)).toEqual(['wouldStart', 'wouldStart', 'wouldStart', 'wouldStart']);
    expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE schedule_id = $1`, [s.id])).rowCount).toBe(0);
    const real = await h.call('POST', `/v1/schedules/${s.id}/backfill`, { body: span });
    expect(real.body.slots.map((x: { outcome: string }) => x.outcome)).toEqual(['started', 'started', 'started', 'started']);
    const again = await h.call('POST', `/v1/schedules/${s.id}/backfill`, { body: span });
    expect(again.body.slots.map((x: { outcome: string }) => x.outcome)).toEqual(['recorded', 'recorded', 'recorded', 'recorded']);
    expect((await h.db.pool.query(`SELECT 1 FROM runs WHERE schedule_id = $1`, [s.id])).rowCount).toBe(4);
    const big = await h.call('POST', `/v1/schedules/${s.id}/backfill`, { body: { from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' } });
    expect([big.status, big.body.error.code]).toEqual([400, 'BackfillTooLarge']);
    const future = await h.call('POST', `/v1/schedules/${s.id}/backfill`, { body: { from: '2026-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z' } });
    expect([future.status, future.body.error.details[0].key]).toEqual([400, 'to']);
    const page = await h.call('GET', `/v1/schedules/${s.id}/slots?limit=3`);
    expect(page.body.items.map((x: { slotAt: string }) => x.slotAt)).toEqual(['2026-01-01T03:00:00.000Z', '2026-01-01T02:00:00.000Z', '2026-01-01T01:00:00.000Z']);
    const rest = await h.call('GET', `/v1/schedules/${s.id}/slots?limit=3&cursor=${page.body.nextCursor}`);
    expect(rest.body.items.map((x: { slotAt: string }) => x.slotAt)).toEqual(['2026-01-01T00:00:00.000Z']);
  });
});
