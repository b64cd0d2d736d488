/**
 * The CONTRACT §5 table and the §8 refusals, route by route, against real Postgres and
 * Redis: every /v1 route answers 401 without a key, 404 (and changes nothing) for another
 * tenant's resource, 404 for an unknown or malformed id, node or edge; lists default to
 * 50 and clamp to 200; the `Idempotency-Key` header is the same idempotency key as
 * `requestId`; bodies over 1 MiB answer 413 on every body route. Node and run states are
 * set with SQL (no dispatcher runs here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, chatGraph, createDefinition, lineGraph, startHarness, startRun, type Harness } from './harness';

const KEY_C = 'key-tenant-c';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let h: Harness;
/** Tenant A's fixtures: a definition and a Running run of `mainGraph`, a Chat definition and a conversation. */
let defId: string;
let runId: string;
let chatDef: string;
const convId = 'contract-table-conv';
/** Tenant A's uploaded file. */
let fileId: string;
/** Tenant A's MCP server. */
let mcpId: string;
/** Tenant A's waitpoint tokens of the main run: one to read and complete, one to revoke. */
let wpId: string;
let wpRevokeId: string;
let evId: string;
let hookId: string;
let deliveryId: string;
let agentId: string;
let schedId: string;
/** Tenant A's managed API key. */
let apiKeyId: string;
const SCHEDULE_BODY = { key: 'nightly', definitionId: '<chat>', spec: { cron: '0 3 * * *', timezone: 'Europe/Paris' } };
const AGENT_BODY = { name: 'helper', instructions: 'Answer briefly.', tools: ['echo'] };
const MCP_BODY = { name: 'docs', url: 'https://mcp.example/mcp', transport: 'streamable-http' };

/** start → agent → llm → t → t2 → t3 → gate → end; it declares the signal channel `review`. */
function mainGraph() {
  const keys = ['start', 'agent', 'llm', 't', 't2', 't3', 'gate', 'end'];
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'agent', kind: 'Agent', config: { instructions: 'help' } },
      { key: 'llm', kind: 'LlmCall', config: { prompt: 'hello' } },
      { key: 't', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 't2', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 't3', kind: 'Tool', config: { toolName: 'echo' } },
      { key: 'gate', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve'] } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: keys.slice(1).map((to, i) => ({ key: `e${i + 1}`, from: keys[i]!, to })),
    signals: { review: {} },
  };
}

const q = (sql: string, params: unknown[] = []) => h.db.pool.query(sql, params);

async function setNode(run: string, key: string, status: string, extra = ''): Promise<void> {
  await q(`UPDATE node_runs SET status = $3, attempt = CASE WHEN $3 = 'Pending' THEN 0 ELSE 1 END ${extra} WHERE run_id = $1 AND node_key = $2`, [
    run,
    key,
    status,
  ]);
}

beforeAll(async () => {
  h = await startHarness(
    {},
    new Map([
      [KEYS.a, 'tenantA'],
      [KEYS.b, 'tenantB'],
      [KEY_C, 'tenantC'],
    ]),
  );
  defId = await createDefinition(h, mainGraph(), 'main');
  runId = await startRun(h, defId, { requestId: 'contract-main' });
  await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [runId]);
  await setNode(runId, 'start', 'Succeeded');
  await setNode(runId, 'agent', 'Failed');
  await setNode(runId, 'llm', 'Running');
  await setNode(runId, 'gate', 'WaitingForApproval', `, pending_decision_kind = 'Approve'`);
  chatDef = await createDefinition(h, chatGraph(), 'chat');
  const sent = await h.call('POST', `/v1/conversations/${convId}/messages`, { body: { definitionId: chatDef, text: 'hi', requestId: 'conv-1' } });
  if (sent.status !== 202) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
  const form = new FormData();
  form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
  const uploaded = await h.app.request('/v1/files', { method: 'POST', headers: { authorization: `Bearer ${KEYS.a}` }, body: form });
  fileId = ((await uploaded.json()) as { fileId: string }).fileId;
  const mcp = await h.call('POST', '/v1/mcp-servers', { body: MCP_BODY });
  if (mcp.status !== 201) throw new Error(`mcp server: ${mcp.status} ${JSON.stringify(mcp.body)}`);
  mcpId = mcp.body.id;
  // waitpoints are minted by a dispatcher's plan: none runs here, so two rows are written as it would
  const token = async () =>
    (await q(`INSERT INTO waitpoints (id, tenant_id, run_id, node_key, arm_index, kind, expires_at)
              VALUES (gen_random_uuid(), 'tenantA', $1, 'llm', 0, 'token', now() + interval '1 hour') RETURNING id`, [runId])).rows[0].id as string;
  wpId = await token();
  wpRevokeId = await token();
  evId = 'contract-event-1';
  await h.call('POST', '/v1/events', { body: [{ name: 'contract.event', id: evId, data: {} }] });
  const hook = await h.call('POST', '/v1/webhooks', { body: { slug: 'contract', target: { definitionId: defId }, auth: { type: 'none' } } });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  hookId = hook.body.id;
  const delivered = await h.app.request('/hooks/tenantA/contract', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  deliveryId = ((await delivered.json()) as { deliveryId: string }).deliveryId;
  const agent = await h.call('POST', '/v1/agents', { body: AGENT_BODY });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  agentId = agent.body.id;
  const sched = await h.call('POST', '/v1/schedules', { body: { ...SCHEDULE_BODY, definitionId: chatDef } });
  if (sched.status !== 201) throw new Error(`schedule: ${sched.status} ${JSON.stringify(sched.body)}`);
  schedId = sched.body.id;
  const minted = await h.call('POST', '/v1/api-keys', { body: { name: 'contract', scopes: ['read'] } });
  if (minted.status !== 201) throw new Error(`api key: ${minted.status} ${JSON.stringify(minted.body)}`);
  apiKeyId = minted.body.id;
});
afterAll(async () => {
  await h.close();
});

interface Row {
  method: string;
  /** the OpenAPI path template */
  template: string;
  path: (ids: { def: string; run: string; conv: string; file?: string; mcp?: string; agent?: string; wp?: string; wpRevoke?: string; ev?: string; hook?: string; delivery?: string; sched?: string; apiKey?: string; node?: string; edge?: string }) => string;
  body?: unknown;
}

/** Every /v1 route of CONTRACT §5, with a body its validator accepts. */
const ROUTES: Row[] = [
  { method: 'POST', template: '/v1/definitions', path: () => '/v1/definitions', body: { name: 'x', graph: lineGraph() } },
  { method: 'GET', template: '/v1/definitions', path: () => '/v1/definitions' },
  { method: 'POST', template: '/v1/definitions/validate', path: () => '/v1/definitions/validate', body: { graph: lineGraph() } },
  { method: 'GET', template: '/v1/definitions/{id}', path: (i) => `/v1/definitions/${i.def}` },
  { method: 'GET', template: '/v1/definitions/{id}/render', path: (i) => `/v1/definitions/${i.def}/render?format=dot` },
  { method: 'GET', template: '/v1/definitions/{id}/describe', path: (i) => `/v1/definitions/${i.def}/describe` },
  { method: 'GET', template: '/v1/definitions/{id}/versions', path: (i) => `/v1/definitions/${i.def}/versions` },
  { method: 'GET', template: '/v1/definitions/{id}/versions/{version}', path: (i) => `/v1/definitions/${i.def}/versions/1` },
  { method: 'DELETE', template: '/v1/definitions/{id}/versions/{version}', path: (i) => `/v1/definitions/${i.def}/versions/1` },
  { method: 'GET', template: '/v1/definitions/{id}/diff', path: (i) => `/v1/definitions/${i.def}/diff?from=1&to=1` },
  { method: 'GET', template: '/v1/definitions/{id}/aliases', path: (i) => `/v1/definitions/${i.def}/aliases` },
  { method: 'PUT', template: '/v1/definitions/{id}/aliases/{name}', path: (i) => `/v1/definitions/${i.def}/aliases/canary`, body: { version: 1 } },
  { method: 'DELETE', template: '/v1/definitions/{id}/aliases/{name}', path: (i) => `/v1/definitions/${i.def}/aliases/canary` },
  { method: 'PUT', template: '/v1/definitions/{id}', path: (i) => `/v1/definitions/${i.def}`, body: { name: 'renamed', version: 1 } },
  { method: 'DELETE', template: '/v1/definitions/{id}', path: (i) => `/v1/definitions/${i.def}` },
  { method: 'POST', template: '/v1/definitions/{id}/duplicate', path: (i) => `/v1/definitions/${i.def}/duplicate` },
  { method: 'POST', template: '/v1/definitions/{id}/runs', path: (i) => `/v1/definitions/${i.def}/runs`, body: {} },
  { method: 'POST', template: '/v1/definitions/{id}/validate', path: (i) => `/v1/definitions/${i.def}/validate` },
  // disabled and at once enabled again, so the rows after it can still start runs of it
  { method: 'POST', template: '/v1/definitions/{id}/disable', path: (i) => `/v1/definitions/${i.def}/disable` },
  { method: 'POST', template: '/v1/definitions/{id}/enable', path: (i) => `/v1/definitions/${i.def}/enable` },
  { method: 'GET', template: '/v1/runs', path: () => '/v1/runs' },
  { method: 'GET', template: '/v1/runs/{id}', path: (i) => `/v1/runs/${i.run}` },
  { method: 'POST', template: '/v1/runs/{id}/cancel', path: (i) => `/v1/runs/${i.run}/cancel` },
  { method: 'POST', template: '/v1/runs/{id}/reschedule', path: (i) => `/v1/runs/${i.run}/reschedule`, body: { delay: 'PT1H' } },
  { method: 'POST', template: '/v1/runs/{id}/fork', path: (i) => `/v1/runs/${i.run}/fork`, body: { fromNodeKey: 'llm' } },
  { method: 'POST', template: '/v1/runs/{id}/migrate', path: (i) => `/v1/runs/${i.run}/migrate`, body: { toVersion: 1, dryRun: true } },
  { method: 'POST', template: '/v1/runs/bulk', path: () => '/v1/runs/bulk', body: { action: 'cancel', filter: { status: 'Failed' }, dryRun: true } },
  { method: 'GET', template: '/v1/bulk-jobs/{bulkId}', path: () => `/v1/bulk-jobs/${UNKNOWN}` },
  { method: 'GET', template: '/v1/bulk-jobs/{bulkId}/runs', path: () => `/v1/bulk-jobs/${UNKNOWN}/runs` },
  { method: 'POST', template: '/v1/bulk-jobs/{bulkId}/resume', path: () => `/v1/bulk-jobs/${UNKNOWN}/resume` },
  { method: 'GET', template: '/v1/runs/{id}/nodes/{key}', path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 'llm'}` },
  { method: 'GET', template: '/v1/runs/{id}/nodes/{key}/agent-steps', path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 'agent'}/agent-steps` },
  {
    method: 'POST',
    template: '/v1/runs/{id}/nodes/{key}/decide',
    path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 'gate'}/decide`,
    body: { operationId: 'op-1', decision: 'Approve' },
  },
  {
    method: 'POST',
    template: '/v1/runs/{id}/signals',
    path: (i) => `/v1/runs/${i.run}/signals`,
    body: { channel: 'review', payload: { ok: true }, requestId: 'sig-1' },
  },
  {
    method: 'POST',
    template: '/v1/runs/{id}/nodes/{key}/steer',
    path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 'llm'}/steer`,
    body: { operationId: 'st-1', message: 'be brief' },
  },
  { method: 'GET', template: '/v1/runs/{id}/events', path: (i) => `/v1/runs/${i.run}/events` },
  { method: 'GET', template: '/v1/runs/{id}/state', path: (i) => `/v1/runs/${i.run}/state` },
  { method: 'GET', template: '/v1/runs/{id}/stream', path: (i) => `/v1/runs/${i.run}/stream` },
  { method: 'GET', template: '/v1/runs/{id}/controls', path: (i) => `/v1/runs/${i.run}/controls` },
  { method: 'GET', template: '/v1/runs/{id}/blockers', path: (i) => `/v1/runs/${i.run}/blockers` },
  { method: 'POST', template: '/v1/runs/{id}/pause', path: (i) => `/v1/runs/${i.run}/pause` },
  { method: 'POST', template: '/v1/runs/{id}/resume', path: (i) => `/v1/runs/${i.run}/resume` },
  { method: 'POST', template: '/v1/runs/{id}/step', path: (i) => `/v1/runs/${i.run}/step`, body: { mode: 'one' } },
  { method: 'PUT', template: '/v1/runs/{id}/breakpoints', path: (i) => `/v1/runs/${i.run}/breakpoints`, body: { nodeKeys: ['t3'] } },
  {
    method: 'PUT',
    template: '/v1/runs/{id}/edges/{edgeKey}/override',
    path: (i) => `/v1/runs/${i.run}/edges/${i.edge ?? 'e3'}/override`,
    body: { verdict: true },
  },
  { method: 'POST', template: '/v1/runs/{id}/nodes/{key}/skip', path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 't'}/skip` },
  { method: 'POST', template: '/v1/runs/{id}/nodes/{key}/retry', path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 'agent'}/retry` },
  {
    method: 'POST',
    template: '/v1/runs/{id}/nodes/{key}/complete',
    path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 't3'}/complete`,
    body: { output: { done: true } },
  },
  { method: 'PUT', template: '/v1/runs/{id}/nodes/{key}/input', path: (i) => `/v1/runs/${i.run}/nodes/${i.node ?? 't2'}/input`, body: { input: { edited: 1 } } },
  { method: 'GET', template: '/v1/tools', path: () => '/v1/tools' },
  { method: 'GET', template: '/v1/whoami', path: () => '/v1/whoami' },
  { method: 'GET', template: '/v1/workers', path: () => '/v1/workers' },
  { method: 'GET', template: '/v1/audit', path: () => '/v1/audit' },
  { method: 'GET', template: '/v1/audit/export', path: () => '/v1/audit/export' },
  { method: 'GET', template: '/v1/audit/verify', path: () => '/v1/audit/verify' },
  { method: 'POST', template: '/v1/api-keys', path: () => '/v1/api-keys', body: { name: 'other', scopes: ['read'] } },
  { method: 'GET', template: '/v1/api-keys', path: () => '/v1/api-keys' },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/api-keys/{id}', path: (i) => `/v1/api-keys/${i.apiKey ?? i.run}` },
  { method: 'POST', template: '/v1/api-keys/{id}/rotate', path: (i) => `/v1/api-keys/${i.apiKey ?? i.run}/rotate`, body: { graceSeconds: 0 } },
  { method: 'DELETE', template: '/v1/api-keys/{id}', path: (i) => `/v1/api-keys/${i.apiKey ?? i.run}` },
  // a multipart body: its success and its own cap are in files.int.test.ts
  { method: 'POST', template: '/v1/files', path: () => '/v1/files' },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/files/{id}', path: (i) => `/v1/files/${i.file ?? i.run}` },
  { method: 'POST', template: '/v1/mcp-servers', path: () => '/v1/mcp-servers', body: { ...MCP_BODY, name: 'other' } },
  { method: 'GET', template: '/v1/mcp-servers', path: () => '/v1/mcp-servers' },
  // unknown and malformed ids reuse the run's (a malformed id is read as a name no server has)
  { method: 'GET', template: '/v1/mcp-servers/{id}', path: (i) => `/v1/mcp-servers/${i.mcp ?? i.run}` },
  { method: 'PUT', template: '/v1/mcp-servers/{id}', path: (i) => `/v1/mcp-servers/${i.mcp ?? i.run}`, body: { ...MCP_BODY, timeoutMs: 5_000 } },
  { method: 'DELETE', template: '/v1/mcp-servers/{id}', path: (i) => `/v1/mcp-servers/${i.mcp ?? i.run}` },
  { method: 'GET', template: '/v1/mcp-servers/{id}/tools', path: (i) => `/v1/mcp-servers/${i.mcp ?? i.run}/tools` },
  { method: 'POST', template: '/v1/agents', path: () => '/v1/agents', body: { ...AGENT_BODY, name: 'other' } },
  { method: 'GET', template: '/v1/agents', path: () => '/v1/agents' },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/agents/{id}', path: (i) => `/v1/agents/${i.agent ?? i.run}` },
  { method: 'PUT', template: '/v1/agents/{id}', path: (i) => `/v1/agents/${i.agent ?? i.run}`, body: { ...AGENT_BODY, maxIterations: 3 } },
  { method: 'GET', template: '/v1/agents/{id}/versions', path: (i) => `/v1/agents/${i.agent ?? i.run}/versions` },
  { method: 'GET', template: '/v1/agents/{id}/versions/{version}', path: (i) => `/v1/agents/${i.agent ?? i.run}/versions/1` },
  { method: 'DELETE', template: '/v1/agents/{id}', path: (i) => `/v1/agents/${i.agent ?? i.run}` },
  { method: 'GET', template: '/v1/conversations', path: () => '/v1/conversations' },
  { method: 'GET', template: '/v1/webhooks', path: () => '/v1/webhooks' },
  { method: 'POST', template: '/v1/webhooks', path: () => '/v1/webhooks', body: { target: { definitionId: '00000000-0000-4000-8000-000000000000' }, auth: { type: 'none' } } },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/webhooks/{id}', path: (i) => `/v1/webhooks/${i.hook ?? i.run}` },
  { method: 'PUT', template: '/v1/webhooks/{id}', path: (i) => `/v1/webhooks/${i.hook ?? i.run}`, body: { slug: 'contract', target: { definitionId: '00000000-0000-4000-8000-000000000000' }, auth: { type: 'none' } } },
  { method: 'DELETE', template: '/v1/webhooks/{id}', path: (i) => `/v1/webhooks/${i.hook ?? i.run}` },
  { method: 'GET', template: '/v1/webhooks/{id}/deliveries', path: (i) => `/v1/webhooks/${i.hook ?? i.run}/deliveries` },
  {
    method: 'POST',
    template: '/v1/webhooks/{id}/deliveries/{deliveryId}/replay',
    path: (i) => `/v1/webhooks/${i.hook ?? i.run}/deliveries/${i.delivery ?? i.run}/replay`,
  },
  { method: 'POST', template: '/v1/schedules', path: () => '/v1/schedules', body: { ...SCHEDULE_BODY, key: 'other' } },
  { method: 'GET', template: '/v1/schedules', path: () => '/v1/schedules' },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/schedules/{id}', path: (i) => `/v1/schedules/${i.sched ?? i.run}` },
  { method: 'PUT', template: '/v1/schedules/{id}', path: (i) => `/v1/schedules/${i.sched ?? i.run}`, body: { ...SCHEDULE_BODY, spec: { every: 'PT1H' } } },
  { method: 'POST', template: '/v1/schedules/{id}/pause', path: (i) => `/v1/schedules/${i.sched ?? i.run}/pause` },
  { method: 'POST', template: '/v1/schedules/{id}/resume', path: (i) => `/v1/schedules/${i.sched ?? i.run}/resume` },
  { method: 'POST', template: '/v1/schedules/{id}/trigger', path: (i) => `/v1/schedules/${i.sched ?? i.run}/trigger` },
  {
    method: 'POST',
    template: '/v1/schedules/{id}/backfill',
    path: (i) => `/v1/schedules/${i.sched ?? i.run}/backfill`,
    body: { from: '2026-01-01T00:00:00Z', to: '2026-01-01T02:00:00Z', dryRun: true },
  },
  { method: 'GET', template: '/v1/schedules/{id}/preview', path: (i) => `/v1/schedules/${i.sched ?? i.run}/preview?count=2` },
  { method: 'GET', template: '/v1/schedules/{id}/slots', path: (i) => `/v1/schedules/${i.sched ?? i.run}/slots` },
  { method: 'DELETE', template: '/v1/schedules/{id}', path: (i) => `/v1/schedules/${i.sched ?? i.run}` },
  { method: 'GET', template: '/v1/waitpoints', path: (i) => `/v1/waitpoints?runId=${i.run}` },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/waitpoints/{id}', path: (i) => `/v1/waitpoints/${i.wp ?? i.run}` },
  { method: 'POST', template: '/v1/waitpoints/{id}/complete', path: (i) => `/v1/waitpoints/${i.wp ?? i.run}/complete`, body: { payload: { ok: true } } },
  { method: 'DELETE', template: '/v1/waitpoints/{id}', path: (i) => `/v1/waitpoints/${i.wpRevoke ?? i.run}` },
  { method: 'POST', template: '/v1/events', path: () => '/v1/events', body: [{ name: 'order.paid', data: { n: 1 } }] },
  { method: 'GET', template: '/v1/events', path: () => '/v1/events?name=contract.event&limit=5' },
  // unknown and malformed ids reuse the run's
  { method: 'GET', template: '/v1/events/{id}', path: (i) => `/v1/events/${i.ev ?? i.run}` },
  { method: 'POST', template: '/v1/events/{id}/replay', path: (i) => `/v1/events/${i.ev ?? i.run}/replay`, body: {} },
  {
    method: 'POST',
    template: '/v1/conversations/{id}/messages',
    path: (i) => `/v1/conversations/${i.conv}/messages`,
    body: { definitionId: '<chat>', text: 'again', requestId: 'conv-2' },
  },
  { method: 'GET', template: '/v1/conversations/{id}/messages', path: (i) => `/v1/conversations/${i.conv}/messages` },
  { method: 'GET', template: '/v1/conversations/{id}/runs', path: (i) => `/v1/conversations/${i.conv}/runs` },
  { method: 'DELETE', template: '/v1/conversations/{id}', path: (i) => `/v1/conversations/${i.conv}` },
];

const ids = () => ({ def: defId, run: runId, conv: convId, file: fileId, mcp: mcpId, agent: agentId, wp: wpId, wpRevoke: wpRevokeId, ev: evId, hook: hookId, delivery: deliveryId, sched: schedId, apiKey: apiKeyId });
const bodyOf = (r: Row) =>
  r.body !== null && typeof r.body === 'object' && 'definitionId' in r.body ? { ...r.body, definitionId: chatDef } : r.body;
const call = (r: Row, path: string, token: string | null) => h.call(r.method, path, { ...(r.body === undefined ? {} : { body: bodyOf(r) }), token });
const label = (r: Row) => `${r.method} ${r.template}`;
const withId = ROUTES.filter((r) => r.template.includes('{id}'));
const withNode = ROUTES.filter((r) => r.template.includes('{key}'));

/** What a refused request must leave alone: the run row, its nodes, intents and events, tenant A's definitions. */
async function stateOfA(): Promise<unknown> {
  const run = await q(`SELECT status, version, last_seq, paused, breakpoints, edge_overrides, step_allowance FROM runs WHERE id = $1`, [runId]);
  const nodes = await q(`SELECT node_key, status, steering, decision, input_override FROM node_runs WHERE run_id = $1 ORDER BY node_key`, [runId]);
  const counts = await q(
    `SELECT (SELECT count(*)::int FROM intents WHERE run_id = $1) AS intents,
            (SELECT count(*)::int FROM events WHERE run_id = $1) AS events,
            (SELECT count(*)::int FROM runs WHERE tenant_id = 'tenantA') AS runs,
            (SELECT count(*)::int FROM messages WHERE tenant_id = 'tenantA') AS messages,
            (SELECT json_agg(json_build_object('id', id, 'name', name, 'version', version) ORDER BY id) FROM definitions WHERE tenant_id = 'tenantA') AS defs`,
    [runId],
  );
  return { run: run.rows, nodes: nodes.rows, counts: counts.rows };
}

describe('the route table', () => {
  it('covers every /v1 route of the OpenAPI document', async () => {
    const doc = (await h.call('GET', '/openapi.json', { token: null })).body;
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([p]) => p.startsWith('/v1/'))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ROUTES.map(label).sort()).toEqual(listed.sort());
  });
});

describe('401 (§5 auth, §8)', () => {
  it.each(ROUTES.map((r) => [label(r), r] as const))('%s answers 401 Unauthorized without a key and with an unknown key', async (_l, r) => {
    for (const token of [null, 'not-a-key']) {
      const res = await call(r, r.path(ids()), token);
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code: 'Unauthorized' });
    }
  });
});

describe('another tenant’s resource answers 404 (§5, §8)', () => {
  it('answers 404 NotFound on every route naming tenant A’s definition, run or conversation, and changes nothing', async () => {
    const before = await stateOfA();
    for (const r of withId) {
      const res = await call(r, r.path(ids()), KEYS.b);
      expect({ route: label(r), status: res.status, code: res.body?.error?.code }).toEqual({ route: label(r), status: 404, code: 'NotFound' });
    }
    expect(await stateOfA()).toEqual(before);
  });

  it('leaves tenant A’s definitions and runs out of tenant B’s lists', async () => {
    const defs = await h.call('GET', '/v1/definitions?limit=200', { token: KEYS.b });
    const runs = await h.call('GET', '/v1/runs?limit=200', { token: KEYS.b });
    expect(defs.body.items.map((d: { id: string }) => d.id)).not.toContain(defId);
    expect(runs.body.items.map((d: { id: string }) => d.id)).not.toContain(runId);
    expect((await h.call('GET', `/v1/runs?definitionId=${defId}`, { token: KEYS.b })).body.items).toEqual([]);
    const events = await h.call('GET', '/v1/events?limit=200', { token: KEYS.b });
    expect(events.body.items.map((e: { id: string }) => e.id)).not.toContain(evId);
    // the owner's list holds it (the control)
    expect((await h.call('GET', '/v1/events?name=contract.event')).body.items.map((e: { id: string }) => e.id)).toContain(evId);
  });

  it('answers the owner on the same requests: each route’s success (the control for the 404s above)', async () => {
    const expected: Record<string, number | string> = {
      'GET /v1/definitions/{id}': 200,
      'GET /v1/definitions/{id}/render': 200,
      'GET /v1/definitions/{id}/describe': 200,
      'GET /v1/definitions/{id}/versions': 200,
      'GET /v1/definitions/{id}/versions/{version}': 200,
      // version 1 is the definition's latest: retiring it is refused
      'DELETE /v1/definitions/{id}/versions/{version}': '409 VersionIsLatest',
      'GET /v1/definitions/{id}/diff': 200,
      'GET /v1/definitions/{id}/aliases': 200,
      // set, then removed
      'PUT /v1/definitions/{id}/aliases/{name}': 200,
      'DELETE /v1/definitions/{id}/aliases/{name}': 204,
      'PUT /v1/definitions/{id}': 200,
      'POST /v1/definitions/{id}/duplicate': 201,
      'POST /v1/definitions/{id}/runs': 202,
      'POST /v1/definitions/{id}/validate': 200,
      'POST /v1/definitions/{id}/disable': 200,
      'POST /v1/definitions/{id}/enable': 200,
      'GET /v1/runs/{id}': 200,
      'GET /v1/runs/{id}/nodes/{key}': 200,
      'GET /v1/runs/{id}/nodes/{key}/agent-steps': 200,
      'POST /v1/runs/{id}/nodes/{key}/decide': 202,
      'POST /v1/runs/{id}/nodes/{key}/steer': 202,
      'POST /v1/runs/{id}/signals': 202,
      'GET /v1/runs/{id}/events': 200,
      'GET /v1/runs/{id}/state': 200,
      'GET /v1/runs/{id}/controls': 200,
      'GET /v1/runs/{id}/blockers': 200,
      'POST /v1/runs/{id}/fork': 202,
      'POST /v1/runs/{id}/migrate': 200,
      'POST /v1/runs/{id}/pause': 202,
      'POST /v1/runs/{id}/step': 202,
      'POST /v1/runs/{id}/resume': 202,
      'PUT /v1/runs/{id}/breakpoints': 200,
      'PUT /v1/runs/{id}/edges/{edgeKey}/override': 200,
      'POST /v1/runs/{id}/nodes/{key}/skip': 202,
      'POST /v1/runs/{id}/nodes/{key}/retry': 202,
      'POST /v1/runs/{id}/nodes/{key}/complete': 202,
      'PUT /v1/runs/{id}/nodes/{key}/input': 200,
      'GET /v1/conversations/{id}/messages': 200,
      'GET /v1/conversations/{id}/runs': 200,
      'GET /v1/files/{id}': 200,
      'GET /v1/mcp-servers/{id}': 200,
      // the harness reads no MCP listings: the connection test says the server cannot be listed
      'GET /v1/mcp-servers/{id}/tools': '502 McpServerUnreachable',
      'PUT /v1/mcp-servers/{id}': 200,
      'DELETE /v1/mcp-servers/{id}': 204,
      'GET /v1/waitpoints/{id}': 200,
      'POST /v1/waitpoints/{id}/complete': 200,
      'DELETE /v1/waitpoints/{id}': 200,
      'GET /v1/webhooks/{id}': 200,
      'GET /v1/webhooks/{id}/deliveries': 200,
      'POST /v1/webhooks/{id}/deliveries/{deliveryId}/replay': 200,
      'PUT /v1/webhooks/{id}': 200,
      'DELETE /v1/webhooks/{id}': 204,
      'GET /v1/events/{id}': 200,
      'POST /v1/events/{id}/replay': 200,
      'GET /v1/agents/{id}': 200,
      'PUT /v1/agents/{id}': 200,
      'GET /v1/agents/{id}/versions': 200,
      'GET /v1/agents/{id}/versions/{version}': 200,
      'DELETE /v1/agents/{id}': 204,
      'GET /v1/schedules/{id}': 200,
      'PUT /v1/schedules/{id}': 200,
      'POST /v1/schedules/{id}/pause': 200,
      'POST /v1/schedules/{id}/resume': 200,
      'POST /v1/schedules/{id}/trigger': 202,
      'POST /v1/schedules/{id}/backfill': 200,
      'GET /v1/schedules/{id}/preview': 200,
      'GET /v1/schedules/{id}/slots': 200,
      'DELETE /v1/schedules/{id}': 204,
      'GET /v1/api-keys/{id}': 200,
      'POST /v1/api-keys/{id}/rotate': 200,
      'DELETE /v1/api-keys/{id}': 204,
      // only a Scheduled run moves; this one is Running
      'POST /v1/runs/{id}/reschedule': '409 RunStateConflict',
      // the live run pins the definition; the conversation's run is still live
      'DELETE /v1/definitions/{id}': '409 DefinitionInUse',
      'POST /v1/conversations/{id}/messages': '409 RunBusy',
      // last: it ends the run's admission of new work
      'POST /v1/runs/{id}/cancel': 202,
      // after every conversation read: it purges the conversation
      'DELETE /v1/conversations/{id}': 204,
    };
    // the stream of a live run stays open; its success is in stream.int.test.ts
    const order = withId.filter((r) => label(r) !== 'GET /v1/runs/{id}/stream');
    expect(order.map(label).sort()).toEqual(Object.keys(expected).sort());
    const answered: Record<string, number | string> = {};
    for (const key of Object.keys(expected)) {
      const r = order.find((x) => label(x) === key)!;
      const res = await call(r, r.path(ids()), KEYS.a);
      answered[key] = res.status < 400 ? res.status : `${res.status} ${res.body?.error?.code}`;
    }
    expect(answered).toEqual(expected);
  });
});

describe('unknown or malformed ids, nodes and edges answer 404 (§8)', () => {
  const sendRoute = 'POST /v1/conversations/{id}/messages';
  it.each(withId.filter((r) => label(r) !== sendRoute).map((r) => [label(r), r] as const))(
    '%s answers 404 for an unknown and a malformed id',
    async (_l, r) => {
      // conversation ids are client-chosen strings of 1–128 characters: 129 is malformed
      const unknown = r.path({ def: UNKNOWN, run: UNKNOWN, conv: `never-used-${label(r).length}` });
      const malformed = r.path({ def: 'not-a-uuid', run: 'not-a-uuid', conv: 'x'.repeat(129) });
      for (const path of [unknown, malformed]) {
        const res = await call(r, path, KEYS.a);
        expect({ path, status: res.status, code: res.body?.error?.code }).toEqual({ path, status: 404, code: 'NotFound' });
      }
    },
  );

  it('answers a message to a 129-character conversation id with 400 (a new id of 1–128 characters is the client’s to choose)', async () => {
    const r = ROUTES.find((x) => label(x) === sendRoute)!;
    const res = await call(r, r.path({ ...ids(), conv: 'x'.repeat(129) }), KEYS.a);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'ValidationFailed' });
  });

  it.each(withNode.map((r) => [label(r), r] as const))('%s answers 404 for a key that names no node of the run', async (_l, r) => {
    const res = await call(r, r.path({ ...ids(), node: 'ghost' }), KEYS.a);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 404, code: 'NotFound' });
  });

  it('answers 404 for an edge override naming no edge of the run, and for a node key used as an edge key', async () => {
    const r = ROUTES.find((x) => x.template === '/v1/runs/{id}/edges/{edgeKey}/override')!;
    for (const edge of ['ghost', 'llm']) {
      const res = await call(r, r.path({ ...ids(), edge }), KEYS.a);
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 404, code: 'NotFound' });
    }
  });
});

describe('lists (§8: limit defaults to 50, clamped to 200)', () => {
  let cDef: string;
  beforeAll(async () => {
    cDef = await createDefinition(h, chatGraph(), 'bulk', KEY_C);
    const first = await h.call('POST', `/v1/definitions/${cDef}/runs`, { body: { conversationId: 'bulk-conv' }, token: KEY_C });
    if (first.status !== 202) throw new Error(`start: ${first.status}`);
    await q(`UPDATE runs SET status = 'Completed', finished_at = now() WHERE id = $1`, [first.body.runId]);
    await q(
      `INSERT INTO definitions (tenant_id, name, kind, graph, plan_graph, graph_hash, node_count)
       SELECT tenant_id, 'bulk-' || g, kind, graph, plan_graph, graph_hash, node_count FROM definitions, generate_series(1, 210) g WHERE id = $1`,
      [cDef],
    );
    await q(
      `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard, conversation_id)
       SELECT gen_random_uuid(), tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, 'Completed', shard, conversation_id
       FROM runs, generate_series(1, 210) WHERE id = $1`,
      [first.body.runId],
    );
    await q(
      `INSERT INTO messages (id, tenant_id, conversation_id, role, text)
       SELECT gen_random_uuid(), 'tenantC', 'bulk-conv', 'user', 'm' || g FROM generate_series(1, 210) g`,
    );
    // 210 conversations created in one statement: one created_at, so the cursor walks ties by id
    await q(`INSERT INTO conversations (tenant_id, id) SELECT 'tenantC', 'bulk-' || g FROM generate_series(1, 210) g`);
    await q(
      `INSERT INTO waitpoints (id, tenant_id, run_id, node_key, arm_index, kind, expires_at)
       SELECT gen_random_uuid(), 'tenantC', $1, 'w', 0, 'token', now() + interval '1 hour' FROM generate_series(1, 210)`,
      [first.body.runId],
    );    await q(
      `INSERT INTO api_keys (id, tenant_id, name, scopes, owner, prefix, last_four)
       SELECT gen_random_uuid(), 'tenantC', 'k' || g, ARRAY['read'], 'contract', 'fl_tenantC', 'abcd' FROM generate_series(1, 210) g`,
    );
  });

  it.each(['/v1/definitions', '/v1/runs', '/v1/conversations', '/v1/conversations/bulk-conv/messages', '/v1/conversations/bulk-conv/runs', '/v1/waitpoints', '/v1/api-keys'])(
    '%s answers 50 items by default and at most 200 for a larger limit, with a next cursor',
    async (path) => {
      const dflt = await h.call('GET', path, { token: KEY_C });
      expect(dflt.status).toBe(200);
      expect(dflt.body.items).toHaveLength(50);
      expect(dflt.body.nextCursor).toEqual(expect.any(String));
      const big = await h.call('GET', `${path}?limit=5000`, { token: KEY_C });
      expect(big.status).toBe(200);
      expect(big.body.items).toHaveLength(200);
      expect(big.body.nextCursor).toEqual(expect.any(String));
      const rest = await h.call('GET', `${path}?limit=200&cursor=${encodeURIComponent(big.body.nextCursor)}`, { token: KEY_C });
      expect(rest.body.items.length).toBeGreaterThan(0);
      expect(rest.body.items.length).toBeLessThanOrEqual(200);
      const seen = new Set([...big.body.items, ...rest.body.items].map((x: { id: string }) => x.id));
      expect(seen.size).toBe(big.body.items.length + rest.body.items.length);
    },
  );
});

describe('POST /v1/definitions/{id}/runs idempotency (§5, §8)', () => {
  it('answers 409 RequestIdReused when an Idempotency-Key header already started a run of another definition', async () => {
    const one = await createDefinition(h, lineGraph(), 'hdr-one');
    const two = await createDefinition(h, lineGraph(), 'hdr-two');
    const first = await h.call('POST', `/v1/definitions/${one}/runs`, { body: {}, headers: { 'idempotency-key': 'hdr-shared' } });
    expect(first.status).toBe(202);
    const other = await h.call('POST', `/v1/definitions/${two}/runs`, { body: {}, headers: { 'idempotency-key': 'hdr-shared' } });
    expect({ status: other.status, code: other.body.error?.code }).toEqual({ status: 409, code: 'RequestIdReused' });
    const viaBody = await h.call('POST', `/v1/definitions/${two}/runs`, { body: { requestId: 'hdr-shared' } });
    expect(viaBody.status).toBe(409);
  });

  it('replays the same runId for an Idempotency-Key header after the run ended, and for the same key given as requestId', async () => {
    const def = await createDefinition(h, lineGraph(), 'hdr-replay');
    const first = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {}, headers: { 'idempotency-key': 'hdr-forever' } });
    await q(`UPDATE runs SET status = 'Completed', finished_at = now() WHERE id = $1`, [first.body.runId]);
    const again = await h.call('POST', `/v1/definitions/${def}/runs`, { body: {}, headers: { 'idempotency-key': 'hdr-forever' } });
    expect({ status: again.status, runId: again.body.runId }).toEqual({ status: 202, runId: first.body.runId });
    const asBody = await h.call('POST', `/v1/definitions/${def}/runs`, { body: { requestId: 'hdr-forever' } });
    expect({ status: asBody.status, runId: asBody.body.runId }).toEqual({ status: 202, runId: first.body.runId });
  });
});

describe('operator verbs (§8)', () => {
  it('answers 409 NodeStateConflict to completing a ChatInput in any state', async () => {
    const def = await createDefinition(h, chatGraph(), 'chat-complete');
    const run = await startRun(h, def);
    await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [run]);
    for (const status of ['Pending', 'WaitingForApproval', 'Failed']) {
      await setNode(run, 'ask', status, status === 'WaitingForApproval' ? `, pending_decision_kind = 'Answer'` : `, pending_decision_kind = NULL`);
      const r = await h.call('POST', `/v1/runs/${run}/nodes/ask/complete`, { body: { output: { text: 'x' } } });
      expect({ status, code: r.status, error: r.body.error?.code }).toEqual({ status, code: 409, error: 'NodeStateConflict' });
    }
    expect((await q(`SELECT 1 FROM intents WHERE run_id = $1`, [run])).rowCount).toBe(0);
  });

  it('completes a non-human node that is Pending, Queued, Running or Failed, and refuses one that is Succeeded, Skipped or Cancelled', async () => {
    const answers: Record<string, string> = {};
    for (const status of ['Pending', 'Queued', 'Running', 'Failed', 'Succeeded', 'Skipped', 'Cancelled']) {
      const run = await startRun(h, defId);
      await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [run]);
      await setNode(run, 't', status);
      const r = await h.call('POST', `/v1/runs/${run}/nodes/t/complete`, { body: { output: { by: 'operator' } } });
      answers[status] = r.status === 202 ? '202' : `${r.status} ${r.body.error?.code}`;
    }
    expect(answers).toEqual({
      Pending: '202', Queued: '202', Running: '202', Failed: '202',
      Succeeded: '409 NodeStateConflict', Skipped: '409 NodeStateConflict', Cancelled: '409 NodeStateConflict',
    });
  });

  it('steers a Queued Agent of a run without a chat binding', async () => {
    const run = await startRun(h, defId);
    await q(`UPDATE runs SET status = 'Running' WHERE id = $1`, [run]);
    await setNode(run, 'agent', 'Queued');
    const r = await h.call('POST', `/v1/runs/${run}/nodes/agent/steer`, { body: { operationId: 'ag-1', message: 'focus' } });
    expect(r.status).toBe(202);
    const row = await q(`SELECT steering FROM node_runs WHERE run_id = $1 AND node_key = 'agent'`, [run]);
    expect(row.rows[0].steering).toEqual([expect.objectContaining({ operationId: 'ag-1', message: 'focus', attempt: 1 })]);
  });
});

describe('bad bodies (§5)', () => {
  it('answers 400 ValidationFailed to a definition update without a version, a validate without a graph and a run start with a non-string requestId', async () => {
    const def = await createDefinition(h, lineGraph(), 'bodies');
    const cases: Array<[string, string, unknown, string]> = [
      ['PUT', `/v1/definitions/${def}`, { name: 'x' }, 'version'],
      ['POST', '/v1/definitions/validate', {}, 'graph'],
      ['POST', `/v1/definitions/${def}/runs`, { requestId: 5 }, 'requestId'],
      ['POST', `/v1/definitions/${def}/runs`, { conversationId: 'c'.repeat(129) }, 'conversationId'],
    ];
    for (const [method, path, body, key] of cases) {
      const r = await h.call(method, path, { body });
      expect({ path, status: r.status, code: r.body.error?.code }).toEqual({ path, status: 400, code: 'ValidationFailed' });
      expect(r.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ key })]));
    }
    expect((await h.call('GET', `/v1/definitions/${def}`)).body.version).toBe(1);
  });

  // the upload streams up to MAX_UPLOAD_BYTES instead (files.int.test.ts)
  it.each(ROUTES.filter((r) => r.method !== 'GET' && r.method !== 'DELETE' && r.template !== '/v1/files').map((r) => [label(r), r] as const))(
    '%s answers 413 PayloadTooLarge to a body over 1 MiB',
    async (_l, r) => {
      const raw = `{"pad":${JSON.stringify('a'.repeat(1024 * 1024 + 1))}}`;
      const res = await h.call(r.method, r.path(ids()), { raw });
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 413, code: 'PayloadTooLarge' });
    },
  );
});
