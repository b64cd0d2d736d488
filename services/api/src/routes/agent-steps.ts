/**
 * `GET /v1/runs/{id}/nodes/{key}/agent-steps`: an Agent node's checkpointed transcript, step by
 * step — each model answer, tool result, approval and steering message the LLM worker wrote
 * (libs/db agent-steps). The node's output keeps only a summary of its steps (kinds, tool
 * names, arguments); the tool results and model texts are read here, opened from their sealed
 * rows. Paged oldest first by step number.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { getNodeRun, getRunHead, listAgentSteps } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { NotFoundError } from '../errors';
import { requireCursor, requireKey, requireUuid } from '../present';
import { JsonSchema, NodeParam, PageQuery, jsonContent, pageSchema } from '../schemas';
import { v1Route } from '../v1-route';

/** Steps per page when the request names no `limit`. */
export const DEFAULT_AGENT_STEPS_PAGE = 20;
/**
 * Most steps per page: a step's payload may be a model answer or a tool result of up to
 * 16 KiB fed back to the model, so a page stays under a few MiB.
 */
export const MAX_AGENT_STEPS_PAGE = 100;

const AgentStepSchema = z
  .object({
    step: z.number().int().openapi({ description: "the step's number over all the node's lives (1, 2, …)" }),
    generation: z.number().int().openapi({ description: "the node's life that wrote it: an operator's retry starts a new one" }),
    attempt: z.number().int().openapi({ description: 'the attempt that wrote it' }),
    kind: z.enum(['model', 'tool', 'approval', 'steer']),
    payload: JsonSchema.openapi({
      description:
        'model: {text, reasoning, toolCalls, usage}; tool: {callId, name, arguments?, ok, error?, content} (content is what the model was shown); ' +
        'approval: {phase, callId, tool, arguments, …}; steer: the message applied',
    }),
    createdAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AgentStep');

const route = v1Route.runs('get', '/v1/runs/{id}/nodes/{key}/agent-steps', {
  operationId: 'listAgentSteps',
  summary: "Read an Agent node's transcript: model answers, tool calls with their results, approvals, steering",
  description:
    `Oldest first; \`limit\` defaults to ${DEFAULT_AGENT_STEPS_PAGE} and is clamped to 1..${MAX_AGENT_STEPS_PAGE}; \`nextCursor\` reads the next page. ` +
    'Every life of the node (each operator retry) is listed; `generation` tells them apart. A node that is not an Agent, or one that has ' +
    'not run yet, answers an empty page. 404 NotFound names the run or the node.',
  request: { params: NodeParam, query: PageQuery },
  responses: { 200: jsonContent(pageSchema(AgentStepSchema, 'AgentStepList'), 'steps after the cursor, oldest first') },
});

/** The cursor is the last step number of the page read (a decimal integer). */
const decodeStepCursor = (s: string): number | null => (/^\d{1,9}$/.test(s) ? Number(s) : null);

/** Registers the Agent transcript route on `app`. */
export function registerAgentStepRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  app.openapi(route, async (c) => {
    const p = c.req.valid('param');
    const q = c.req.valid('query');
    const runId = requireUuid(p.id, 'run');
    const nodeKey = requireKey(p.key, 'node');
    const after = requireCursor(q.cursor, decodeStepCursor);
    const limit = Math.min(MAX_AGENT_STEPS_PAGE, Math.max(1, q.limit ?? DEFAULT_AGENT_STEPS_PAGE));
    const tenant = c.get('tenant');
    if (!(await getRunHead(deps.pool, tenant, runId))) throw new NotFoundError('run');
    if (!(await getNodeRun(deps.pool, runId, nodeKey))) throw new NotFoundError('node');
    const page = await listAgentSteps(deps.pool, tenant, runId, nodeKey, after, limit);
    const last = page.steps.at(-1);
    return sendJson(200, {
      items: page.steps.map((s) => ({ step: s.step, generation: s.generation, attempt: s.attempt, kind: s.kind, payload: s.payload, createdAt: s.createdAt.toISOString() })),
      nextCursor: page.more && last ? String(last.step) : null,
    });
  });
}
