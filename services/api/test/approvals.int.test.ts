/**
 * Approval policies on a Pause over REST, against real Postgres and Redis. Each tick is the
 * dispatcher's own load → plan → apply, done in-process (no dispatcher runs here), so the tests
 * see exactly what a committed tick does to the gate.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPlans, loadSnapshots } from '@flowline/db';
import { DEFAULT_CORE_OPTIONS, plan } from '@flowline/graph';
import { createDefinition, pauseGraph, startHarness, type Harness } from './harness';

const PEOPLE = ['ivy', 'abe', 'ann', 'bob', 'cat', 'dan', 'eve'] as const;
type Person = (typeof PEOPLE)[number];
const keyOf = (p: Person) => `key-${p}`;

let h: Harness;
const id = {} as Record<Person, string>;
beforeAll(async () => {
  h = await startHarness({}, new Map(PEOPLE.map((p) => [keyOf(p), 'tenantA'])));
  for (const p of PEOPLE) id[p] = (await h.call('GET', '/v1/whoami', { token: keyOf(p) })).body.principal;
});
afterAll(() => h.close());

/** One dispatcher tick of `runId` at `now`, committed. */
async function tick(runId: string, now = Date.now()): Promise<void> {
  const [snap] = await loadSnapshots(h.db.pool, [runId], { maxConcurrentRuns: 100 });
  const p = plan(snap!, { now, options: DEFAULT_CORE_OPTIONS, newId: () => randomUUID() });
  const out = await applyPlans(h.db.pool, [{ snapshot: snap!, plan: p }], { shardCount: 16 });
  expect(out.failed).toEqual([]);
}

/** A run of a policy Pause saved by abe and started by ivy, ticked until it waits. */
async function gateRun(approval: Record<string, unknown>): Promise<string> {
  const graph = pauseGraph();
  (graph.nodes[1]!.config as Record<string, unknown>).approval = approval;
  const def = await createDefinition(h, graph, 'approve', keyOf('abe'));
  const r = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {}, token: keyOf('ivy') });
  expect(r.status).toBe(202);
  await tick(r.body.runId);
  expect((await h.call('GET', `/v1/runs/${r.body.runId}/nodes/gate`, { token: keyOf('ann') })).body.status).toBe('WaitingForApproval');
  return r.body.runId as string;
}

const decide = (runId: string, who: Person, decision: 'Approve' | 'Reject', extra: { operationId?: string; headers?: Record<string, string> } = {}) =>
  h.call('POST', `/v1/runs/${runId}/nodes/gate/decide`, { body: { operationId: extra.operationId ?? randomUUID(), decision }, token: keyOf(who), ...(extra.headers ? { headers: extra.headers } : {}) });
const gateNode = async (runId: string) => (await h.call('GET', `/v1/runs/${runId}/nodes/gate`, { token: keyOf('ann') })).body;

const FIN_LEGAL = () => ({
  quorums: [
    { name: 'finance', principals: [id.ivy, id.ann, id.bob, id.cat], min: 2 },
    { name: 'legal', principals: [id.cat, id.dan, id.abe], min: 1 },
  ],
  approveRule: 'allQuorums',
  rejectRule: 'any',
  forbid: ['initiator', 'definitionAuthor'],
});

describe('approval policies', () => {
  it('needs all three of 2-of-finance + 1-of-legal, a principal in both counting once; the initiator and author are refused 403; a second decision 409', async () => {
    const runId = await gateRun(FIN_LEGAL());
    expect(await decide(runId, 'ivy', 'Approve')).toMatchObject({ status: 403, body: { error: { code: 'ApprovalForbidden', rule: 'initiator' } } });
    expect(await decide(runId, 'ivy', 'Approve', { headers: { 'x-flowline-client': 'console' } })).toMatchObject({ status: 403, body: { error: { rule: 'initiator' } } });
    expect(await decide(runId, 'abe', 'Approve')).toMatchObject({ status: 403, body: { error: { code: 'ApprovalForbidden', rule: 'definitionAuthor' } } });
    expect(await decide(runId, 'eve', 'Approve')).toMatchObject({ status: 403, body: { error: { rule: 'notInQuorum' } } });

    const op = randomUUID();
    const first = await decide(runId, 'cat', 'Approve', { operationId: op, headers: { 'x-flowline-client': 'console' } });
    expect(first).toMatchObject({ status: 202, body: { accepted: true, approval: { status: 'pending' } } });
    // the same operation again replays; another decision by the same principal is refused
    expect((await decide(runId, 'cat', 'Approve', { operationId: op })).status).toBe(202);
    expect(await decide(runId, 'cat', 'Reject')).toMatchObject({ status: 409, body: { error: { code: 'AlreadyDecided' } } });

    expect(await decide(runId, 'ann', 'Approve')).toMatchObject({ status: 202, body: { approval: { status: 'pending' } } });
    await tick(runId);
    const waiting = await gateNode(runId);
    expect(waiting).toMatchObject({
      status: 'WaitingForApproval',
      approval: {
        status: 'pending',
        quorums: [{ name: 'finance', min: 2 }, { name: 'legal', min: 1 }],
        decisions: [{ principal: id.cat, decision: 'Approve', path: 'console' }, { principal: id.ann, decision: 'Approve', path: 'rest' }],
      },
    });
    // cat counts once: two distinct principals fill two of the three places, whichever quorum shows them
    expect(waiting.approval.quorums.reduce((n: number, q: { approvals: number }) => n + q.approvals, 0)).toBe(2);
    await h.db.pool.query(`INSERT INTO shard_leases (shard, owner, expires_at) SELECT g, 'd-test', now() + interval '1 hour' FROM generate_series(0, 15) g
                           ON CONFLICT (shard) DO UPDATE SET owner = 'd-test', expires_at = now() + interval '1 hour'`);
    const blockers = (await h.call('GET', `/v1/runs/${runId}/blockers`, { token: keyOf('ann') })).body.blockers;
    expect(blockers.find((b: { nodeKey: string }) => b.nodeKey === 'gate')).toMatchObject({ kind: 'gate', details: { approval: { status: 'pending', quorums: [{ name: 'finance' }, { name: 'legal' }] } } });

    expect(await decide(runId, 'bob', 'Approve')).toMatchObject({ status: 202, body: { approval: { status: 'approved' } } });
    await tick(runId);
    const done = await gateNode(runId);
    expect(done).toMatchObject({ status: 'Succeeded', output: { output: { decision: 'Approve', approval: { status: 'approved', by: 'quorum' } } } });
    expect((await h.call('GET', `/v1/runs/${runId}`, { token: keyOf('ann') })).body.run.status).toBe('Completed');
    expect(await decide(runId, 'dan', 'Approve')).toMatchObject({ status: 409, body: { error: { code: 'GateAlreadyDecided' } } });
  });

  it('lets one reject veto the approvals under rejectRule any', async () => {
    const runId = await gateRun(FIN_LEGAL());
    expect((await decide(runId, 'ann', 'Approve')).status).toBe(202);
    expect((await decide(runId, 'bob', 'Approve')).status).toBe(202);
    expect(await decide(runId, 'dan', 'Reject')).toMatchObject({ status: 202, body: { approval: { status: 'rejected' } } });
    await tick(runId);
    expect(await gateNode(runId)).toMatchObject({ status: 'Succeeded', output: { output: { decision: 'Reject', approval: { by: 'veto' } } } });
    const nodes = (await h.call('GET', `/v1/runs/${runId}`, { token: keyOf('ann') })).body.nodeRuns;
    expect(nodes.find((n: { nodeKey: string }) => n.nodeKey === 'no').status).toBe('Succeeded');
  });

  it('fires the timeout action at the gate deadline the run wakes at, and refuses a later decision', async () => {
    const runId = await gateRun({ ...FIN_LEGAL(), timeout: 'PT2S', onTimeout: 'reject' });
    const { rows } = await h.db.pool.query(`SELECT extract(epoch FROM r.wake_at) * 1000 AS wake, extract(epoch FROM n.deadline_at) * 1000 AS deadline,
                                                   extract(epoch FROM n.started_at) * 1000 AS started
                                            FROM runs r JOIN node_runs n ON n.run_id = r.id AND n.node_key = 'gate' WHERE r.id = $1`, [runId]);
    expect(Number(rows[0].deadline)).toBeCloseTo(Number(rows[0].started) + 2000, -1);
    expect(Number(rows[0].wake)).toBeCloseTo(Number(rows[0].deadline), -1);
    const late = Number(rows[0].deadline) + 1;
    await tick(runId, late);
    expect(await gateNode(runId)).toMatchObject({ status: 'Succeeded', output: { output: { decision: 'Reject', approval: { status: 'rejected', by: 'timeout' } } } });
    expect((await decide(runId, 'ann', 'Approve')).status).toBe(409);
  });

  it('judges a signed approval link by the same policy: the initiator refused, a named principal decides as itself, a forged link 403, a GET 405', async () => {
    const runId = await gateRun(FIN_LEGAL());
    const links = (await gateNode(runId)).approval.links as Record<string, string>;
    expect(Object.keys(links).sort()).toEqual([id.ivy, id.ann, id.bob, id.cat, id.dan, id.abe].sort());
    const post = (url: string, body: unknown) => h.call('POST', new URL(url).pathname, { body, token: null });
    expect(await post(links[id.ivy]!, { decision: 'Approve' })).toMatchObject({ status: 403, body: { error: { code: 'ApprovalForbidden', rule: 'initiator' } } });
    expect(await post(links[id.abe]!, { decision: 'Approve' })).toMatchObject({ status: 403, body: { error: { rule: 'definitionAuthor' } } });
    const forged = links[id.ann]!.replace(/[^/]+$/, 'A'.repeat(43));
    expect(await post(forged, { decision: 'Approve' })).toMatchObject({ status: 403, body: { error: { code: 'ApprovalLinkInvalid' } } });
    expect((await h.call('GET', new URL(links[id.ann]!).pathname, { token: null })).status).toBe(405);
    expect(await post(links[id.ann]!, { decision: 'Approve' })).toMatchObject({ status: 202, body: { approval: { status: 'pending' } } });
    // a repeat of the link replays; the same principal through REST is the same principal
    expect((await post(links[id.ann]!, { decision: 'Approve' })).status).toBe(202);
    expect(await decide(runId, 'ann', 'Approve')).toMatchObject({ status: 409, body: { error: { code: 'AlreadyDecided' } } });
    expect((await gateNode(runId)).approval.decisions).toEqual([expect.objectContaining({ principal: id.ann, decision: 'Approve', path: 'link' })]);
  });
});
