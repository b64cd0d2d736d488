/**
 * `GET /v1/runs/{id}/blockers` — "why isn't this run moving?": for each non-terminal node the
 * one thing it waits for (libs/graph `blockers`). This route only gathers the facts: the run's
 * snapshot, its shard lease and tenant slot usage (one query, database clock) and, for each
 * Queued/Running lane node, its job in Redis (held in the dispatch window or on its lane, with
 * position and depth).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { getRunBlockerFacts, loadSnapshots, pendingToolCall } from '@flowline/db';
import { blockers, concurrencyPlaceFree, LANE_OF_KIND, mcpServersOf, startIssues, type Blocker, type JobFact, type JsonObject, type RunSnapshot } from '@flowline/graph';
import { laneJobFact } from '@flowline/queue';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { requestDecider } from '../approval-decide';
import { NotFoundError } from '../errors';
import { mcpServersCatalog } from '../mcp-catalog';
import { requireUuid } from '../present';
import { IdParam, RunBlockersSchema, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';
import { callbackUrl } from '../waitpoint-links';
import { waitpointLinksOf } from './waitpoints';

/** MAX_CONCURRENT_RUNS when the deployment passes none (CONTRACT §7). */
const DEFAULT_MAX_CONCURRENT_RUNS = 100;
/** Detail members holding epoch ms, answered as ISO 8601. */
const TIME_DETAILS = ['until', 'deadlineAt', 'expiresAt'] as const;

const blockersRoute = v1Route.runs('get', '/v1/runs/{id}/blockers', {
  operationId: 'getRunBlockers',
  summary: "Why isn't this run moving: what each non-terminal node waits for",
  description:
    'One blocker per non-terminal node, document order, with since-when: shardOwner (no live dispatcher owns the ' +
    "run's shard), runSlot (the tenant holds MAX_CONCURRENT_RUNS live runs), concurrencyKey (the run's concurrency key value " +
    'already has its limit of live runs: key, value, live, limit, ahead), cancelDrain / runCancelling, upstream, ' +
    'join, heldDecision, timer (retry backoff, a timed Wait), signal / token / event (a parked Wait: its channel, its waitpoint with callbackUrl, its event name), wait (a composite Wait: mode and arms), breakpoint, runPaused, laneBacklog (position and depth in the lane), ' +
    'admission (provider capacity), worker, child, gate (who may decide; an Agent parked on a tool call names the tool and its arguments; a Pause with an approval policy carries `approval`: each quorum with its members and progress, the decisions with principal, path and time, and `viewer` — whether the calling key\'s principal may still decide it, else the rule that refuses it), or tick (what the next tick applies). ' +
    'Empty for a finished run, except one a spent budget failed: its rows left behind read budgetExhausted ' +
    '(budget MAX_TOTAL_ATTEMPTS with limit and spent retries, or the run\'s own budget).',
  request: { params: IdParam },
  responses: { 200: jsonContent(RunBlockersSchema, 'the blockers of the run') },
});

/** Registers the blockers route on `app`. */
export function registerBlockerRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const maxConcurrentRuns = deps.limits.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS;
  const links = waitpointLinksOf(deps);

  app.openapi(blockersRoute, async (c) => {
    const runId = requireUuid(c.req.valid('param').id, 'run');
    const facts = await getRunBlockerFacts(deps.pool, c.get('tenant'), runId);
    if (!facts) throw new NotFoundError('run');
    const [snap] = await loadSnapshots(deps.pool, [runId], { maxConcurrentRuns });
    if (!snap) throw new NotFoundError('run');
    const key = facts.concurrency;
    // an unplaced keyed run takes a place on its next tick when one is free for it
    if (key && snap.concurrencyKeyAvailable === false) snap.concurrencyKeyAvailable = concurrencyPlaceFree(key.live, key.ahead, key.limit);
    const list = blockers(snap, {
      now: facts.now,
      slots: { live: facts.live, limit: maxConcurrentRuns, ahead: facts.ahead },
      ...(key ? { concurrency: { key: snap.graph.concurrency?.key ?? '', value: key.value, live: key.live, limit: key.limit, ahead: key.ahead } } : {}),
      shard: { shard: facts.shard, owner: facts.owner, expiresAt: facts.expiresAt },
      jobs: await jobFacts(deps, snap),
      callbackUrls: Object.fromEntries((snap.waitpoints ?? []).filter((w) => w.kind === 'token').map((w) => [w.id, callbackUrl(links, c.req.url, w.id)])),
      toolCalls: await toolCallFacts(deps, snap),
      unavailable: await unavailableFacts(deps, snap),
      ...(deps.limits.maxTotalAttempts !== undefined ? { maxTotalAttempts: deps.limits.maxTotalAttempts } : {}),
      // a policy gate says whether the reader may still decide it ("waiting for me")
      viewer: { decider: requestDecider(c), initiator: facts.initiator, definitionAuthor: facts.definitionAuthor },
    });
    return sendJson(200, { runId, status: snap.run.status, at: new Date(facts.now).toISOString(), blockers: list.map(present) });
  });
}

/** The Redis facts of every Queued/Running lane row's job, by invocation id. */
async function jobFacts(deps: AppDeps, snap: RunSnapshot): Promise<Record<string, JobFact>> {
  const out: Record<string, JobFact> = {};
  await Promise.all(
    snap.nodes.map(async (row) => {
      const lane = LANE_OF_KIND[row.kind];
      if (!lane || row.invocationId === null || (row.status !== 'Queued' && row.status !== 'Running')) return;
      out[row.invocationId] = await laneJobFact(deps.redis, deps.queuePrefix, lane, row.invocationId, snap.run.tenantId);
    }),
  );
  return out;
}

/**
 * What each node of the run's pinned graph names that is no longer available — tools the
 * registry no longer has, MCP servers the tenant deleted — by node key: the start check of the
 * pinned graph as things are now (server existence only: listing a server's tools is network
 * work a read does not do).
 */
async function unavailableFacts(deps: AppDeps, snap: RunSnapshot): Promise<Record<string, string[]>> {
  const servers = mcpServersOf(snap.graph);
  const mcp = servers.length > 0 ? await mcpServersCatalog(deps.pool, deps.mcp, snap.run.tenantId, servers) : undefined;
  const out: Record<string, string[]> = {};
  for (const issue of startIssues(snap.graph, { maxNodes: Number.POSITIVE_INFINITY, tools: deps.tools.parserCatalog(), ...(mcp ? { mcp } : {}) })) {
    if (issue.key !== null) (out[issue.key] ??= []).push(issue.message);
  }
  return out;
}

/** The tool call each Agent parked on a person waits for, by node key (from its transcript). */
async function toolCallFacts(deps: AppDeps, snap: RunSnapshot): Promise<Record<string, { tool: string; arguments: JsonObject }>> {
  const out: Record<string, { tool: string; arguments: JsonObject }> = {};
  await Promise.all(
    snap.nodes.map(async (row) => {
      if (row.status !== 'WaitingForApproval' || row.pendingDecisionKind !== 'ToolCall') return;
      const call = await pendingToolCall(deps.pool, snap.run.tenantId, snap.run.id, row.nodeKey);
      if (call) out[row.nodeKey] = { tool: call.tool, arguments: call.arguments };
    }),
  );
  return out;
}

function present(b: Blocker) {
  const details: Record<string, unknown> = { ...b.details };
  for (const k of TIME_DETAILS) {
    const v = details[k];
    if (typeof v === 'number') details[k] = new Date(v).toISOString();
  }
  // a composite Wait's arms carry their own times
  if (Array.isArray(details.arms)) {
    details.arms = (details.arms as Array<Record<string, unknown>>).map((a) => (typeof a.until === 'number' ? { ...a, until: new Date(a.until).toISOString() } : a));
  }
  return { nodeKey: b.nodeKey, status: b.status, kind: b.kind, since: b.since === null ? null : new Date(b.since).toISOString(), details };
}
