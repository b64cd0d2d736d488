/**
 * Inbound webhooks over HTTP against real Postgres and Redis: deliveries signed as each sender
 * signs them (Standard Webhooks with its own library; GitHub, Stripe and Slack by the schemes
 * they document) verified over the raw bytes, refused when tampered or stale, deduplicated,
 * logged with their verdicts and replayable; hooks resolved from Postgres by any replica.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../src/app';
import { createDefinition, lineGraph, startHarness, type Harness } from './harness';

let h: Harness;
let def: string;
beforeAll(async () => {
  h = await startHarness();
  def = await createDefinition(h, lineGraph(), 'hooked');
});
afterAll(() => h.close());

/** POSTs raw bytes to a hook path with headers, no key. */
async function deliver(path: string, body: Buffer | string, headers: Record<string, string>, app = h.app) {
  const res = await app.request(path, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

const runsOf = async (definitionId: string) =>
  (await h.db.pool.query(`SELECT id, request_id, input FROM runs WHERE definition_id = $1 ORDER BY created_at`, [definitionId])).rows;

const now = () => Math.floor(Date.now() / 1000);

async function createHook(body: Record<string, unknown>) {
  const res = await h.call('POST', '/v1/webhooks', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; url: string; slug: string; secret?: string };
}

const pathOf = (url: string) => new URL(url).pathname;

describe('Standard Webhooks', () => {
  let hook: { id: string; url: string; secret?: string };
  let target: string;
  beforeAll(async () => {
    target = await createDefinition(h, lineGraph(), 'std-target');
    hook = await createHook({ slug: 'std', target: { definitionId: target }, auth: { type: 'hmac', preset: 'standardWebhooks' } });
  });

  const signed = (secret: string, id: string, payload: string, at = new Date()) => ({
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
  });

  it('answers the URL and a generated whsec_ secret once; GET never shows it', async () => {
    expect(hook.url).toBe('http://localhost/hooks/tenantA/std');
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const got = (await h.call('GET', `/v1/webhooks/${hook.id}`)).body;
    expect(JSON.stringify(got)).not.toContain(hook.secret!);
    expect(got.auth.secrets).toEqual([{ id: 'primary', notAfter: null }]);
  });

  it('starts a run with the JSON body as input; the same webhook-id again is a duplicate with the same run', async () => {
    const payload = JSON.stringify({ order: 7 });
    const first = await deliver(pathOf(hook.url), payload, signed(hook.secret!, 'msg_1', payload));
    expect(first.status).toBe(202);
    const again = await deliver(pathOf(hook.url), payload, signed(hook.secret!, 'msg_1', payload));
    expect(again).toMatchObject({ status: 200, body: { duplicate: true, runId: first.body.runId } });
    const runs = await runsOf(target);
    expect(runs).toHaveLength(1);
    expect(runs[0].request_id).toBe(`hook:${hook.id}:msg_1`);
  });

  it('refuses a tampered body and a timestamp past the tolerance with 401, starting nothing, each logged', async () => {
    const payload = JSON.stringify({ order: 8 });
    const headers = signed(hook.secret!, 'msg_2', payload);
    expect((await deliver(pathOf(hook.url), JSON.stringify({ order: 9 }), headers)).status).toBe(401);
    const old = signed(hook.secret!, 'msg_3', payload, new Date(Date.now() - 10 * 60_000));
    const stale = await deliver(pathOf(hook.url), payload, old);
    expect(stale.status).toBe(401);
    expect(stale.body.error.code).toBe('WebhookSignatureInvalid');
    expect(await runsOf(target)).toHaveLength(1);
    const log = (await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.items;
    expect(log.slice(0, 4).map((d: { verdict: string }) => d.verdict)).toEqual(['stale', 'badSignature', 'duplicate', 'verified']);
    expect(log[0]).toMatchObject({ status: 401, bodyBytes: null, runId: null });
  });

  it('verifies with either secret during a rotation, and only the new one after notAfter', async () => {
    const oldSecret = hook.secret!;
    const rotated = await h.call('PUT', `/v1/webhooks/${hook.id}`, {
      body: { slug: 'std', target: { definitionId: target }, auth: { type: 'hmac', preset: 'standardWebhooks', secrets: [{ id: 'primary', notAfter: new Date(Date.now() + 60_000).toISOString() }, { id: 'next' }] } },
    });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    for (const [secret, id] of [[oldSecret, 'rot_old'], [newSecret, 'rot_new']] as const) {
      const p = JSON.stringify({ id });
      expect((await deliver(pathOf(hook.url), p, signed(secret, id, p))).status).toBe(202);
    }
    // the old secret expires
    await h.call('PUT', `/v1/webhooks/${hook.id}`, {
      body: { slug: 'std', target: { definitionId: target }, auth: { type: 'hmac', preset: 'standardWebhooks', secrets: [{ id: 'primary', notAfter: new Date(Date.now() - 1000).toISOString() }, { id: 'next' }] } },
    });
    const p = JSON.stringify({ id: 'late_old' });
    expect((await deliver(pathOf(hook.url), p, signed(oldSecret, 'late_old', p))).status).toBe(401);
    expect((await deliver(pathOf(hook.url), p, signed(newSecret, 'late_new', p))).status).toBe(202);
  });

  it('verifies binary and multipart bodies over their raw bytes; the run input carries them as base64', async () => {
    const secret = (await h.call('PUT', `/v1/webhooks/${hook.id}`, { body: { slug: 'std', target: { definitionId: target }, auth: { type: 'hmac', preset: 'standardWebhooks', secrets: [{ id: 'bin' }] } } })).body.secret as string;
    const bytes = Buffer.from([0, 255, 1, 254, 0x0a, 0x0d, 0x80, 0x81]);
    const binHeaders = { ...signed(secret, 'bin_1', bytes.toString('latin1')), 'content-type': 'application/octet-stream' };
    binHeaders['webhook-signature'] = new Webhook(secret).sign('bin_1', new Date(Number(binHeaders['webhook-timestamp']) * 1000), bytes);
    const bin = await deliver(pathOf(hook.url), bytes, binHeaders);
    expect(bin.status).toBe(202);
    const form = new FormData();
    form.append('note', 'héllo');
    form.append('file', new Blob([new Uint8Array([1, 2, 3, 0])]), 'a.bin');
    const req = new Request('http://x', { method: 'POST', body: form });
    const multipart = Buffer.from(await req.arrayBuffer());
    const at = new Date();
    const mpHeaders = {
      'content-type': req.headers.get('content-type')!,
      'webhook-id': 'mp_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('mp_1', at, multipart),
    };
    expect((await deliver(pathOf(hook.url), multipart, mpHeaders)).status).toBe(202);
    const runs = await runsOf(target);
    const binRun = runs.find((r) => r.request_id === `hook:${hook.id}:bin_1`);
    expect(binRun.input).toEqual({ contentType: 'application/octet-stream', bodyBase64: bytes.toString('base64') });
    const mpRun = runs.find((r) => r.request_id === `hook:${hook.id}:mp_1`);
    expect(Buffer.from(mpRun.input.bodyBase64, 'base64').equals(multipart)).toBe(true);
  });
});

describe('GitHub, Stripe, Slack and custom signatures', () => {
  const secret = 'a-shared-secret-of-the-sender';
  const hmacHex = (data: string) => createHmac('sha256', secret).update(data).digest('hex');

  it('GitHub: X-Hub-Signature-256 over the body; a repeated X-GitHub-Delivery is one run', async () => {
    const target = await createDefinition(h, lineGraph(), 'gh-target');
    const hook = await createHook({ slug: 'gh', target: { definitionId: target }, auth: { type: 'hmac', preset: 'github', secrets: [{ id: 's', value: secret }] } });
    const payload = JSON.stringify({ action: 'opened' });
    const headers = { 'content-type': 'application/json', 'x-github-delivery': 'd-1', 'x-hub-signature-256': `sha256=${hmacHex(payload)}` };
    expect((await deliver(pathOf(hook.url), payload, headers)).status).toBe(202);
    expect((await deliver(pathOf(hook.url), payload, headers)).status).toBe(200);
    expect((await deliver(pathOf(hook.url), payload + ' ', headers)).status).toBe(401);
    expect(await runsOf(target)).toHaveLength(1);
  });

  it('Stripe: t=…,v1=… over "t.body", stale past the tolerance', async () => {
    const hook = await createHook({ slug: 'stripe', target: { definitionId: def }, auth: { type: 'hmac', preset: 'stripe', toleranceSec: 60, secrets: [{ id: 's', value: secret }] } });
    const payload = '{"type":"charge.succeeded"}';
    const t = now();
    expect((await deliver(pathOf(hook.url), payload, { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${hmacHex(`${t}.${payload}`)}` })).status).toBe(202);
    const old = t - 120;
    expect((await deliver(pathOf(hook.url), payload, { 'content-type': 'application/json', 'stripe-signature': `t=${old},v1=${hmacHex(`${old}.${payload}`)}` })).status).toBe(401);
    expect((await deliver(pathOf(hook.url), payload, { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${hmacHex(`${t}.x`)}` })).status).toBe(401);
  });

  it('Slack: v0= over "v0:ts:body" with X-Slack-Request-Timestamp', async () => {
    const hook = await createHook({ slug: 'slack', target: { definitionId: def }, auth: { type: 'hmac', preset: 'slack', secrets: [{ id: 's', value: secret }] } });
    const payload = 'token=x&text=hello';
    const t = String(now());
    const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': t, 'x-slack-signature': `v0=${hmacHex(`v0:${t}:${payload}`)}` };
    expect((await deliver(pathOf(hook.url), payload, headers)).status).toBe(202);
    expect((await deliver(pathOf(hook.url), payload, { ...headers, 'x-slack-signature': 'v0=00' })).status).toBe(401);
  });

  it('custom: a named header, algorithm, encoding and prefix; bearer and none', async () => {
    const custom = await createHook({
      slug: 'custom',
      target: { definitionId: def },
      auth: { type: 'hmac', preset: 'custom', header: 'x-acme-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'sig=', secrets: [{ id: 's', value: secret }] },
    });
    const payload = 'anything';
    const sig = createHmac('sha512', secret).update(payload).digest('base64');
    expect((await deliver(pathOf(custom.url), payload, { 'x-acme-sig': `sig=${sig}` })).status).toBe(202);
    expect((await deliver(pathOf(custom.url), payload, { 'x-acme-sig': sig })).status).toBe(401);
    const bearer = await createHook({ slug: 'bearer', target: { definitionId: def }, auth: { type: 'bearer' } });
    expect((await deliver(pathOf(bearer.url), '{}', { authorization: `Bearer ${bearer.secret}`, 'content-type': 'application/json' })).status).toBe(202);
    expect((await deliver(pathOf(bearer.url), '{}', { authorization: 'Bearer nope' })).status).toBe(401);
    const open = await createHook({ slug: 'open', target: { definitionId: def }, auth: { type: 'none' } });
    expect((await deliver(pathOf(open.url), '{}', {})).status).toBe(202);
  });
});

describe('targets, bounds, replay and replicas', () => {
  it('starts each delivery on the version its alias picks at that delivery (current by default), and refuses one whose alias is gone', async () => {
    const target = await createDefinition(h, lineGraph(), 'aliased-target');
    expect((await h.call('PUT', `/v1/definitions/${target}`, { body: { graph: { ...lineGraph(), nodes: [{ key: 'start', kind: 'Start', label: 'v2' }, lineGraph().nodes[1]] }, version: 1 } })).status).toBe(200);
    const versionOf = async (runId: string) => (await h.db.pool.query('SELECT definition_version FROM runs WHERE id = $1', [runId])).rows[0].definition_version as number;
    const plain = await createHook({ slug: 'plain-current', target: { definitionId: target }, auth: { type: 'none' } });
    const canary = await createHook({ slug: 'to-canary', target: { definitionId: target, alias: 'canary' }, auth: { type: 'none' } });
    expect((await deliver(pathOf(plain.url), '{}', {})).body.runId).toEqual(expect.any(String));
    // rollback: current moves to v1, and the next delivery follows it
    expect((await h.call('PUT', `/v1/definitions/${target}/aliases/current`, { body: { version: 1 } })).status).toBe(200);
    expect(await versionOf((await deliver(pathOf(plain.url), '{}', {})).body.runId)).toBe(1);
    expect((await h.call('PUT', `/v1/definitions/${target}/aliases/canary`, { body: { version: 2 } })).status).toBe(200);
    expect(await versionOf((await deliver(pathOf(canary.url), '{}', {})).body.runId)).toBe(2);
    const events = await h.call('GET', `/v1/runs/${(await deliver(pathOf(canary.url), '{}', {})).body.runId}/events`);
    expect(events.body.events[0].detail).toMatchObject({ definitionVersion: 2, alias: 'canary' });
    expect((await h.call('DELETE', `/v1/definitions/${target}/aliases/canary`)).status).toBe(204);
    const refused = await deliver(pathOf(canary.url), '{}', {});
    expect(refused.status).toBe(400);
    expect((await h.call('POST', '/v1/webhooks', { body: { target: { definitionId: target, alias: 'bad name' }, auth: { type: 'none' } } })).status).toBe(400);
  });

  it('turns a delivery into an event of the intake: the definition subscribed to it starts its run; none subscribed is noMatch', async () => {
    const sub = await createDefinition(h, lineGraph({ triggers: [{ event: 'hooked.*' }] }), 'subscriber');
    const hook = await createHook({ slug: 'to-event', target: { event: 'hooked.thing' }, auth: { type: 'none' }, dedupeHeader: 'x-id' });
    const res = await deliver(pathOf(hook.url), '{"n":1}', { 'content-type': 'application/json', 'x-id': 'e-1' });
    expect(res).toMatchObject({ status: 202, body: { eventId: `hook:${hook.id}:e-1` } });
    expect(await runsOf(sub)).toEqual([expect.objectContaining({ request_id: `event:hook:${hook.id}:e-1:${sub}`, input: { n: 1 } })]);
    expect((await deliver(pathOf(hook.url), '{"n":1}', { 'content-type': 'application/json', 'x-id': 'e-1' })).body).toMatchObject({ duplicate: true });
    const lonely = await createHook({ slug: 'lonely', target: { event: 'nobody.listens' }, auth: { type: 'none' } });
    await deliver(pathOf(lonely.url), '{}', { 'content-type': 'application/json' });
    expect((await h.call('GET', `/v1/webhooks/${lonely.id}/deliveries`)).body.items[0]).toMatchObject({ verdict: 'noMatch', status: 202 });
  });

  it("refuses a body over the hook's bound with 413 and logs it tooLarge", async () => {
    const hook = await createHook({ slug: 'small', target: { definitionId: def }, auth: { type: 'none' }, maxBodyBytes: 16 });
    expect((await deliver(pathOf(hook.url), 'x'.repeat(17), {})).status).toBe(413);
    expect((await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.items[0]).toMatchObject({ verdict: 'tooLarge', status: 413 });
  });

  it('replays a verified delivery (the same run again) and refuses to replay one whose signature failed', async () => {
    const target = await createDefinition(h, lineGraph({ inputSchema: { type: 'object', required: ['ok'] } }), 'strict-hook');
    const hook = await createHook({ slug: 'replayable', target: { definitionId: target }, auth: { type: 'bearer' } });
    const refused = await deliver(pathOf(hook.url), '{"nope":1}', { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'WebhookTargetRefused' } } });
    const ok = await deliver(pathOf(hook.url), '{"ok":1}', { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' });
    expect(ok.status).toBe(202);
    await deliver(pathOf(hook.url), '{}', { authorization: 'Bearer wrong' });
    const [bad, good, refusedLog] = (await h.call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.items;
    expect([bad.verdict, good.verdict, refusedLog.verdict]).toEqual(['badSignature', 'verified', 'refused']);
    const replay = await h.call('POST', `/v1/webhooks/${hook.id}/deliveries/${good.id}/replay`);
    expect(replay.body).toMatchObject({ verdict: 'duplicate', runId: good.runId });
    expect((await h.call('POST', `/v1/webhooks/${hook.id}/deliveries/${bad.id}/replay`)).body.error.code).toBe('WebhookDeliveryNotReplayable');
    expect(await runsOf(target)).toHaveLength(1);
  });

  it('answers every hook from a replica built afresh (nothing registered in memory), and 404 for an unknown one', async () => {
    const hook = await createHook({ slug: 'fresh', target: { definitionId: def }, auth: { type: 'none' } });
    const restarted = createApp({ ...h.deps });
    expect((await deliver(pathOf(hook.url), '{}', {}, restarted)).status).toBe(202);
    expect((await deliver('/hooks/tenantA/no-such-hook', '{}', {}, restarted)).status).toBe(404);
    expect((await deliver('/hooks/tenantB/fresh', '{}', {}, restarted)).status).toBe(404);
  });

  it('refuses a slug taken, a bad definition id and a Standard Webhooks secret not whsec_', async () => {
    await createHook({ slug: 'taken', target: { definitionId: def }, auth: { type: 'none' } });
    expect((await h.call('POST', '/v1/webhooks', { body: { slug: 'taken', target: { definitionId: def }, auth: { type: 'none' } } })).body.error.code).toBe('WebhookSlugTaken');
    expect((await h.call('POST', '/v1/webhooks', { body: { target: { definitionId: 'x' }, auth: { type: 'none' } } })).status).toBe(400);
    const bad = await h.call('POST', '/v1/webhooks', { body: { target: { definitionId: def }, auth: { type: 'hmac', secrets: [{ id: 'a', value: 'not-a-whsec-secret-at-all' }] } } });
    expect(bad.status).toBe(400);
  });
});
