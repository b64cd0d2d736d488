/**
 * The audit contract over the whole API: every mutating route the OpenAPI document lists
 * (POST/PUT/PATCH/DELETE under /v1, and the keyless /hooks and /w ones) leaves exactly one audit
 * row per request, naming the principal, the route's action and the status answered — whether
 * the request succeeded or was refused. Each route is driven with a request good enough to reach
 * it: real ids where the route needs a resource to name its tenant (a keyless route), unknown
 * ids elsewhere (a 404 is a refusal, and is recorded).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest, principalIdOf } from '../src/auth';
import { ROUTE_AUDIT_ACTIONS } from '../src/route-audit';
import { approvalLinkUrl } from '../src/waitpoint-links';
import { waitpointLinksOf } from '../src/routes/waitpoints';
import { KEYS, createDefinition, startHarness, startRun, tickRun, waitGraph, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('every mutating route writes exactly one audit row', () => {
  it('walks /openapi.json', async () => {
    const doc = (await h.call('GET', '/openapi.json', { token: null })).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`)
        // sign-out writes its own row when it ends a person's session (oidc.int.test.ts)
        .filter((r) => r !== 'POST /auth/logout'),
    );
    expect(routes.length).toBeGreaterThan(50);
    // the table names exactly the document's mutating routes
    expect([...routes].sort()).toEqual(Object.keys(ROUTE_AUDIT_ACTIONS).sort());

    // what the keyless routes need to learn their tenant: a hook, a parked token, a run
    const hook = await h.call('POST', '/v1/webhooks', { body: { slug: 'audit-hook', target: { event: 'audited' }, auth: { type: 'hmac', preset: 'github' } } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const runId = await startRun(h, await createDefinition(h, waitGraph({ token: { timeout: 'PT1H' } })));
    await tickRun(h, runId);
    const token = (await h.call('GET', `/v1/runs/${runId}/nodes/w`)).body.waitpoints[0];
    const approval = new URL(approvalLinkUrl(waitpointLinksOf(h.deps), 'http://localhost/', runId, 'w', 'alice')).pathname;

    const principalA = principalIdOf(keyDigest(KEYS.a));
    const concrete = (route: string): { path: string; keyed: boolean; principal: string } => {
      const path = route.split(' ')[1]!;
      if (path === '/hooks/{tenant}/{slug}') return { path: '/hooks/tenantA/audit-hook', keyed: false, principal: `webhook:${hook.body.id}` };
      if (path === '/w/{tokenId}/{signature}') return { path: new URL(token.callbackUrl).pathname, keyed: false, principal: `link:${token.id}` };
      if (path.startsWith('/w/a/')) return { path: approval, keyed: false, principal: 'alice' };
      return { path: path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'key' || name === 'edgeKey' ? 'n1' : randomUUID())), keyed: true, principal: principalA };
    };

    const sent: { route: string; requestId: string; status: number; principal: string }[] = [];
    for (const route of routes) {
      const { path, keyed, principal } = concrete(route);
      const requestId = `contract-${sent.length}`;
      // a link's body is validated before its run is looked up (and its tenant known): send a valid one
      const body = route.startsWith('POST /w/a/') ? { decision: 'Approve' } : {};
      const res = await h.call(route.split(' ')[0]!, path, { body, token: keyed ? KEYS.a : null, headers: { 'x-request-id': requestId } });
      sent.push({ route, requestId, status: res.status, principal });
    }
    const rows = (await h.db.pool.query(`SELECT request_id, tenant_id, principal, action, status FROM audit_log WHERE request_id LIKE 'contract-%'`)).rows;
    const problems: string[] = [];
    for (const s of sent) {
      const mine = rows.filter((r) => r.request_id === s.requestId);
      const want = (ROUTE_AUDIT_ACTIONS as Record<string, { action: string }>)[s.route]!.action;
      if (mine.length !== 1) problems.push(`${s.route}: ${mine.length} rows (answered ${s.status})`);
      else if (mine[0].principal !== s.principal || mine[0].action !== want || mine[0].status !== s.status || mine[0].tenant_id !== 'tenantA') {
        problems.push(`${s.route}: ${JSON.stringify(mine[0])} (answered ${s.status})`);
      }
    }
    expect(problems).toEqual([]);
    expect((await h.call('GET', '/v1/audit/verify')).body).toMatchObject({ ok: true });
  });
});

describe('a write that succeeds writes exactly one row too', () => {
  it('records each success once, with its status and resource', async () => {
    const principal = principalIdOf(keyDigest(KEYS.a));
    let n = 0;
    const send = async (method: string, path: string, body?: unknown) => {
      const requestId = `ok-${n++}`;
      const res = await h.call(method, path, { ...(body === undefined ? {} : { body }), headers: { 'x-request-id': requestId } });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      const rows = (await h.db.pool.query(`SELECT principal, action, status, resource_id FROM audit_log WHERE request_id = $1`, [requestId])).rows;
      expect(rows, `${method} ${path}`).toHaveLength(1);
      expect(rows[0]).toMatchObject({ principal, status: res.status });
      return { res, row: rows[0] as { action: string; resource_id: string | null } };
    };
    const created = await send('POST', '/v1/definitions', { name: 'ok', graph: waitGraph({ for: 'PT1H' }) });
    const def = created.res.body.id as string;
    expect(created.row).toMatchObject({ action: 'definition.create', resource_id: def });
    expect((await send('PUT', `/v1/definitions/${def}`, { name: 'ok2', version: 1 })).row.action).toBe('definition.update');
    expect((await send('POST', `/v1/definitions/${def}/disable`)).row.action).toBe('definition.disable');
    expect((await send('POST', `/v1/definitions/${def}/enable`)).row.action).toBe('definition.enable');
    const copy = await send('POST', `/v1/definitions/${def}/duplicate`);
    expect(copy.row.resource_id).toBe(copy.res.body.id);
    expect((await send('DELETE', `/v1/definitions/${copy.res.body.id}`)).row.action).toBe('definition.delete');
    const started = await send('POST', `/v1/definitions/${def}/runs`, {});
    const runId = started.res.body.runId as string;
    expect(started.row).toMatchObject({ action: 'run.start', resource_id: runId });
    expect((await send('POST', `/v1/runs/${runId}/pause`)).row.action).toBe('run.pause');
    expect((await send('POST', `/v1/runs/${runId}/resume`)).row.action).toBe('run.resume');
    expect((await send('POST', `/v1/runs/${runId}/cancel`, {})).row).toMatchObject({ action: 'run.cancel', resource_id: runId });
    const bulk = await send('POST', '/v1/runs/bulk', { action: 'cancel', filter: { definitionId: def } });
    const bulkId = bulk.res.body.bulkId as string;
    expect(bulk.row).toMatchObject({ action: 'run.bulk', resource_id: bulkId });
    // a job paused by its gate (set here directly: no dispatcher works jobs in this test)
    await h.db.pool.query(`UPDATE bulk_jobs SET status = 'Paused', total = total + 1 WHERE id = $1`, [bulkId]);
    expect((await send('POST', `/v1/bulk-jobs/${bulkId}/resume`)).row).toMatchObject({ action: 'bulkJob.resume', resource_id: bulkId });
    expect((await send('POST', '/v1/events', [{ name: 'audited.event', data: {} }])).row.action).toBe('event.publish');
    const hook = await send('POST', '/v1/webhooks', { slug: 'ok-hook', target: { definitionId: def }, auth: { type: 'none' } });
    expect(hook.row.resource_id).toBe(hook.res.body.id);
    expect((await send('DELETE', `/v1/webhooks/${hook.res.body.id}`)).row.action).toBe('webhook.delete');
    const schedule = await send('POST', '/v1/schedules', { key: 'ok-schedule', definitionId: def, spec: { cron: '30 2 * * *', timezone: 'UTC' } });
    expect((await send('POST', `/v1/schedules/${schedule.res.body.id}/pause`)).row.action).toBe('schedule.pause');
    expect((await send('DELETE', `/v1/schedules/${schedule.res.body.id}`)).row.action).toBe('schedule.delete');
    expect((await h.call('GET', '/v1/audit/verify')).body).toMatchObject({ ok: true });
  });
});
