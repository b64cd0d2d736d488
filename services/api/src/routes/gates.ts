/**
 * `POST /v1/runs/{id}/nodes/{key}/decide` for Pause and ChatInput gates (CONTRACT §5, §8), and
 * for an Agent parked on a tool call (pendingDecisionKind ToolCall): Approve runs the call —
 * with `payload.arguments` instead of the model's when given, checked against the tool's input
 * schema (400 ValidationFailed, the gate stays open) — and Reject hands the model a refusal.
 * The decision is recorded by a compare-and-set on node_runs.decision (WaitingForApproval,
 * no decision yet) with a `decide` intent; the dispatcher applies it and writes
 * `gate.decided`. Idempotency keys never expire: the same operationId with the same body
 * answers 202 again whatever the run's state.
 */
import type { OpenAPIHono} from '@hono/zod-openapi';
import { getGateRead, pendingToolCall, recordDecision, type Queryable } from '@flowline/db';
import { approvalPolicyOf, canonicalJson, validateJson, verbRefusal, verbTakesKind, type GateDecision, type Json, type JsonObject, type NodeKind, type NodeStatus, type RunStatus, type VerbState } from '@flowline/graph';
import { decideByPolicy, requestDecider } from '../approval-decide';
import type { AppDeps, AppEnv } from '../context';
import {
  DecisionNotAllowedError,
  GateAlreadyDecidedError,
  NodeStateConflictError,
  NotFoundError,
  ValidationFailedError,
} from '../errors';
import { bodyMember, jsonText, sendJson } from '../body';
import { requireKey, requireUuid } from '../present';
import { publishWake } from '../wake';
import { DecideAcceptedSchema, DecideBody, ErrorSchema, NodeParam, jsonContent, jsonBody } from '../schemas';
import { v1Route } from '../v1-route';
import { auditPresumeStatus } from '../audit/middleware';

/** Longest ChatInput answer accepted when MAX_CHAT_ANSWER_BYTES is not given, UTF-8 bytes. */
export const DEFAULT_MAX_ANSWER_BYTES = 32_768;

const decideRoute = v1Route.gates('post', '/v1/runs/{id}/nodes/{key}/decide', {
  operationId: 'decideNode',
  summary: "Decide a waiting Pause, answer a ChatInput, or approve or reject an Agent's tool call",
  request: { params: NodeParam, body: jsonBody(DecideBody) },
  responses: {
    202: jsonContent(DecideAcceptedSchema, 'decision recorded (or the same decision replayed); with an approval policy, its progress'),
    403: jsonContent(ErrorSchema, 'ApprovalForbidden: the approval policy refuses this principal (error.rule: initiator, definitionAuthor or notInQuorum)'),
    409: jsonContent(ErrorSchema, 'GateAlreadyDecided, AlreadyDecided (this principal decided this approval already), ApprovalSettled, DecisionNotAllowed or NodeStateConflict'),
  },
});

type Decision = Pick<GateDecision, 'operationId' | 'decision' | 'comment' | 'payload'>;

const sameAct = (a: Decision, b: Decision) =>
  a.operationId === b.operationId &&
  a.decision === b.decision &&
  a.comment === b.comment &&
  canonicalJson(a.payload) === canonicalJson(b.payload);

/** The standing decision as shown in a GateAlreadyDecided answer. */
const standingOf = (d: GateDecision) => ({
  operationId: d.operationId,
  decision: d.decision,
  comment: d.comment,
  payload: d.payload,
  at: typeof d.at === 'number' ? new Date(d.at).toISOString() : d.at,
});

/**
 * Checks the act against the gate's kind and config; throws 409 / 400. An answer is a chat
 * message: it must say something (blank is refused), fit the byte cap counted as stored (UTF-8,
 * so an emoji costs four), and stand alone (a comment beside it has nowhere to go).
 */
export function checkAct(kind: string, config: Record<string, unknown>, act: Decision, maxAnswerBytes: number): void {
  if (kind === 'ChatInput') {
    if (act.decision !== 'Answer') throw new DecisionNotAllowedError('a ChatInput takes only decision "Answer"');
    const text = (act.payload as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') {
      throw new ValidationFailedError('an answer needs payload.text', [{ key: 'payload.text', message: 'required string' }]);
    }
    if (text.trim() === '') {
      throw new ValidationFailedError('an answer must not be blank', [{ key: 'payload.text', message: 'must not be blank' }]);
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxAnswerBytes) {
      throw new ValidationFailedError('answer too long', [
        { key: 'payload.text', message: `${bytes} UTF-8 bytes; at most ${maxAnswerBytes} (MAX_CHAT_ANSWER_BYTES)` },
      ]);
    }
    if (act.comment !== null) {
      throw new ValidationFailedError('a ChatInput answer takes no comment', [{ key: 'comment', message: 'not allowed beside an answer' }]);
    }
    return;
  }
  const allowed = Array.isArray(config.allowedDecisions) ? (config.allowedDecisions as unknown[]) : ['Approve', 'Reject'];
  if (!allowed.includes(act.decision)) {
    throw new DecisionNotAllowedError(`this Pause allows ${allowed.map(String).join(', ')}, not ${act.decision}`);
  }
  if (config.requireComment === true && (act.comment === null || act.comment.trim() === '')) {
    throw new ValidationFailedError('this Pause requires a comment', [{ key: 'comment', message: 'required' }]);
  }
}

/**
 * Checks a decision on an Agent's tool call: Approve or Reject; an Approve's `payload.arguments`,
 * when given, is an object matching the tool's input schema. Throws 409 / 400.
 */
async function checkToolCallAct(db: Queryable, tenant: string, runId: string, nodeKey: string, act: Decision): Promise<void> {
  if (act.decision === 'Answer') throw new DecisionNotAllowedError('a tool call takes decision "Approve" or "Reject"');
  const payload = act.payload;
  if (payload === null) return;
  if (typeof payload !== 'object' || Array.isArray(payload)) {
    throw new ValidationFailedError('payload must be an object', [{ key: 'payload', message: 'an object, with arguments to run the tool with' }]);
  }
  const args = payload['arguments'];
  if (args === undefined) return;
  if (act.decision !== 'Approve') throw new ValidationFailedError('only an approval runs the tool with arguments', [{ key: 'payload.arguments', message: 'not allowed with Reject' }]);
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new ValidationFailedError('payload.arguments must be an object', [{ key: 'payload.arguments', message: 'must be a JSON object' }]);
  }
  const call = await pendingToolCall(db, tenant, runId, nodeKey);
  if (call?.inputSchema) {
    const v = validateJson(call.inputSchema, args);
    if (!v.valid) {
      throw new ValidationFailedError(`payload.arguments do not match the input schema of ${call.tool}`, v.errors.slice(0, 5).map((message) => ({ key: 'payload.arguments', message })));
    }
  }
}

/** The node's config from the pinned parsed graph (falls back to the raw document). */
export function nodeConfig(graph: unknown, key: string): Record<string, unknown> {
  const nodes = (graph as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) return {};
  const node = nodes.find((n) => (n as { key?: unknown } | null)?.key === key) as { config?: unknown } | undefined;
  return node?.config && typeof node.config === 'object' ? (node.config as Record<string, unknown>) : {};
}

/** Registers the decide route on `app`. */
export function registerGateRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(decideRoute, async (c) => {
    const p = c.req.valid('param');
    const runId = requireUuid(p.id, 'run');
    requireKey(p.key, 'node');
    const tenant = c.get('tenant');
    const body = c.req.valid('json');
    const payload = bodyMember(c, 'payload');
    const act: Decision = {
      operationId: body.operationId,
      decision: body.decision,
      comment: body.comment ?? null,
      payload: (payload === undefined ? null : payload) as Json,
    };
    // the run's status and pinned graph with the node's row: one statement, re-read after a lost race
    let gate = await getGateRead(deps.pool, tenant, runId, p.key);
    if (!gate) throw new NotFoundError('run');
    const config = nodeConfig(gate.graph, p.key);
    const policy = approvalPolicyOf(config as JsonObject);
    if (policy.ok && policy.policy) {
      // a Pause with an approval policy: every decision is judged by the policy (approval-decide.ts)
      checkAct('Pause', config, act, 0);
      const decider = requestDecider(c);
      const path = c.req.header('x-flowline-client') === 'console' ? 'console' : 'rest';
      const answer = await decideByPolicy(deps, { tenant, runId, nodeKey: p.key, policy: policy.policy, act, decider, path });
      return sendJson(202, { accepted: true, approval: answer });
    }

    // one re-read after a lost compare-and-set is enough: the decision column is written once
    for (let round = 0; round < 2; round++) {
      if (round > 0) gate = await getGateRead(deps.pool, tenant, runId, p.key);
      const node = gate?.node;
      if (!gate || !node) throw new NotFoundError('node');
      const state: VerbState = {
        runStatus: gate.runStatus as RunStatus,
        node: { status: node.status as NodeStatus, kind: node.kind as NodeKind, held: false, cancelSurvivor: false },
      };
      // the kind first (an act is checked against a gate's config only), the status after the standing decision
      if (!verbTakesKind('decide', state.node!.kind)) throw new NodeStateConflictError(`a ${node.kind} node takes no decision`);
      const standing = node.decision as GateDecision | null;
      if (standing) {
        if (sameAct(standing, act)) return sendJson(202, { accepted: true });
        throw new GateAlreadyDecidedError(standingOf(standing));
      }
      if (node.kind === 'Agent') await checkToolCallAct(deps.pool, tenant, runId, p.key, act);
      else checkAct(node.kind, config, act, deps.limits.maxChatAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
      const refused = verbRefusal('decide', state);
      if (refused !== null) throw new NodeStateConflictError(refused);
      const decision: GateDecision = { ...act, at: Date.now(), applied: false };
      // a recorded decision is answered 202: its audit row can say so as it is written
      auditPresumeStatus(202);
      const recorded = await recordDecision(deps.pool, tenant, runId, p.key, act.operationId, jsonText(decision), c.get('principal').id);
      if (recorded) {
        deps.logger.info({ runId, nodeKey: p.key, decision: act.decision }, 'gate decision recorded');
        await publishWake(deps, runId, tenant);
        return sendJson(202, { accepted: true });
      }
    }
    throw new NodeStateConflictError('the gate changed while deciding; read it again');
  });
}
