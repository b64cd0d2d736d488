/**
 * Saved agents, a tenant resource: `POST/GET /v1/agents`, `GET/PUT/DELETE /v1/agents/{id}`,
 * `GET /v1/agents/{id}/versions[/{version}]`. A saved agent holds the members of an Agent node
 * (`instructions`, `model`, `tools`, `toolApprovals`, `responseJsonSchema`, `reasoningEffort`,
 * `maxIterations`), judged with the Agent node's own checks (a tool of the catalog or an
 * `mcp:<server>/<tool>` of the tenant's servers; a `responseJsonSchema` that compiles). Every
 * write is a new version; an Agent node names the agent with `config.agentDefinitionId` (and
 * optionally `agentVersion`), and a run pins the version when it starts.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { mcpServersOf, parseSavedAgent, SAVED_AGENT_MEMBERS } from '@flowline/graph';
import {
  createSavedAgent,
  decodeAgentCursor,
  decodeAgentVersionCursor,
  deleteSavedAgent,
  getSavedAgent,
  listSavedAgents,
  listSavedAgentVersions,
  SavedAgentNameTakenError,
  updateSavedAgent,
  type SavedAgentInput,
  type SavedAgentRecord,
} from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { ApiError, NotFoundError, ValidationFailedError } from '../errors';
import { mcpServersCatalog } from '../mcp-catalog';
import { pageLimit, requireCursor } from '../present';
import { ErrorSchema, IdParam, jsonBody, jsonContent, pageSchema, PageQuery, VersionParam } from '../schemas';
import { v1Route } from '../v1-route';

/** Longest agent name, in characters. */
export const MAX_AGENT_NAME_CHARS = 128;

/** Another agent of the tenant has the name. */
export class AgentNameTakenApiError extends ApiError {
  constructor(name: string) {
    super(409, 'AgentNameTaken', `an agent named ${name} already exists`);
  }
}

const AgentBody = z
  .object({
    name: z.string().trim().min(1).max(MAX_AGENT_NAME_CHARS).openapi({ description: 'unique in the tenant' }),
    instructions: z.string().openapi({ description: 'the task, sent as the first user message (a template, like the node member)' }),
    model: z.string().nullish(),
    tools: z.array(z.string()).nullish().openapi({ description: 'catalog tools or `mcp:<server>/<tool>` (`mcp:<server>/*`) the model may call' }),
    toolApprovals: z
      .array(z.union([z.string(), z.object({ tool: z.string(), when: z.unknown().optional() }).strict()]))
      .nullish()
      .openapi({ description: 'tools whose calls need an approval: a tool name or `{ tool, when }`' }),
    responseJsonSchema: z.record(z.string(), z.unknown()).nullish().openapi({ description: 'a JSON Schema the answer must satisfy (it must compile)' }),
    reasoningEffort: z.string().nullish(),
    maxIterations: z.number().int().nullish(),
  })
  .strict()
  .openapi('AgentInput');

const AgentSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    name: z.string(),
    version: z.number().int().openapi({ description: 'the version these members are' }),
    latestVersion: z.number().int(),
    instructions: z.string(),
    model: z.string().nullable(),
    tools: z.array(z.string()),
    toolApprovals: z.array(z.unknown()),
    responseJsonSchema: z.record(z.string(), z.unknown()).nullable(),
    reasoningEffort: z.string().nullable(),
    maxIterations: z.number().int().nullable(),
    createdAt: z.string(),
    updatedAt: z.string().openapi({ description: 'when this version was saved' }),
  })
  .openapi('Agent');

const AgentListSchema = pageSchema(AgentSchema, 'AgentList');
const AgentVersionListSchema = pageSchema(
  z.object({ version: z.number().int(), name: z.string(), createdAt: z.string() }).openapi('AgentVersionSummary'),
  'AgentVersionList',
);
const VersionQuery = z.object({ version: z.string().optional().openapi({ description: 'a saved version (default: the latest)', example: '1' }) });

const nameTaken = jsonContent(ErrorSchema, 'AgentNameTaken: another agent of the tenant has the name');
const createRoute = v1Route.agents('post', '/v1/agents', {
  operationId: 'createAgent', summary: 'Save an agent (version 1)',
  request: { body: jsonBody(AgentBody) },
  responses: { 201: jsonContent(AgentSchema, 'saved'), 409: nameTaken },
});
const listRoute = v1Route.agents('get', '/v1/agents', {
  operationId: 'listAgents', summary: "The tenant's saved agents at their latest version, by name",
  request: { query: PageQuery },
  responses: { 200: jsonContent(AgentListSchema, 'a page of agents') },
});
const getRoute = v1Route.agents('get', '/v1/agents/{id}', {
  operationId: 'getAgent', summary: 'A saved agent, at its latest version or `?version=`',
  request: { params: IdParam, query: VersionQuery },
  responses: { 200: jsonContent(AgentSchema, 'the agent at that version') },
});
const putRoute = v1Route.agents('put', '/v1/agents/{id}', {
  operationId: 'updateAgent', summary: 'Replace a saved agent: a new version',
  description: 'Runs started before keep the version they pinned; runs started afterwards use the new one (unless their node names `agentVersion`).',
  request: { params: IdParam, body: jsonBody(AgentBody) },
  responses: { 200: jsonContent(AgentSchema, 'the new version'), 409: nameTaken },
});
const deleteRoute = v1Route.agents('delete', '/v1/agents/{id}', {
  operationId: 'deleteAgent', summary: 'Delete a saved agent and its versions',
  description: 'Definitions naming it stay saved; a run start of one is then refused 400 `GraphInvalid`, keyed to the node.',
  request: { params: IdParam },
  responses: { 204: { description: 'deleted' } },
});
const versionsRoute = v1Route.agents('get', '/v1/agents/{id}/versions', {
  operationId: 'listAgentVersions', summary: "A saved agent's versions, newest first",
  request: { params: IdParam, query: PageQuery },
  responses: { 200: jsonContent(AgentVersionListSchema, 'newest first, without members') },
});
const versionRoute = v1Route.agents('get', '/v1/agents/{id}/versions/{version}', {
  operationId: 'getAgentVersion', summary: 'One saved version of an agent',
  request: { params: VersionParam },
  responses: { 200: jsonContent(AgentSchema, 'the agent at that version') },
});

function present(r: SavedAgentRecord) {
  const m = r.members;
  return {
    id: r.id, name: r.name, version: r.version, latestVersion: r.latestVersion,
    instructions: typeof m.instructions === 'string' ? m.instructions : '',
    model: typeof m.model === 'string' ? m.model : null,
    tools: Array.isArray(m.tools) ? (m.tools as string[]) : [],
    toolApprovals: Array.isArray(m.toolApprovals) ? (m.toolApprovals as unknown[]) : [],
    responseJsonSchema: (m.responseJsonSchema as Record<string, unknown> | undefined) ?? null,
    reasoningEffort: typeof m.reasoningEffort === 'string' ? m.reasoningEffort : null,
    maxIterations: typeof m.maxIterations === 'number' ? m.maxIterations : null,
    createdAt: r.createdAt, updatedAt: r.updatedAt,
  };
}

const versionOf = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : /^[1-9]\d{0,9}$/.test(text) && Number(text) <= 2_147_483_647 ? Number(text) : 0;

/** Registers the saved agent routes. */
export function registerAgentRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;

  /** The body as the store takes it: the members judged like an Agent node's (every problem at once, keyed to the member). */
  async function inputOf(tenant: string, body: z.output<typeof AgentBody>): Promise<SavedAgentInput> {
    const raw: Record<string, unknown> = {};
    for (const m of SAVED_AGENT_MEMBERS) if (body[m] !== undefined && body[m] !== null) raw[m] = body[m];
    const servers = mcpServersOf({ nodes: [{ kind: 'Agent', config: raw }] });
    const mcp = await mcpServersCatalog(pool, deps.mcp, tenant, servers);
    const { members, errors } = parseSavedAgent(raw, { tools: deps.tools.parserCatalog(), mcp });
    if (errors.length > 0) throw new ValidationFailedError(`the agent is invalid (${errors.length} error${errors.length === 1 ? '' : 's'})`, errors);
    return { name: body.name, members };
  }

  const taken = (err: unknown): never => {
    if (err instanceof SavedAgentNameTakenError) throw new AgentNameTakenApiError(err.agentName);
    throw err;
  };

  app.openapi(createRoute, async (c) => {
    const tenant = c.get('tenant');
    const row = await createSavedAgent(pool, tenant, await inputOf(tenant, c.req.valid('json'))).catch(taken);
    deps.logger.info({ agentId: row.id }, 'agent saved');
    return sendJson(201, present(row), { location: `/v1/agents/${row.id}` });
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listSavedAgents(pool, c.get('tenant'), pageLimit(q.limit), requireCursor(q.cursor, decodeAgentCursor));
    return sendJson(200, { items: page.items.map(present), nextCursor: page.nextCursor });
  });

  app.openapi(getRoute, async (c) => {
    const row = await getSavedAgent(pool, c.get('tenant'), c.req.valid('param').id, versionOf(c.req.valid('query').version));
    if (!row) throw new NotFoundError('agent');
    return sendJson(200, present(row));
  });

  app.openapi(putRoute, async (c) => {
    const tenant = c.get('tenant');
    const row = await updateSavedAgent(pool, tenant, c.req.valid('param').id, await inputOf(tenant, c.req.valid('json'))).catch(taken);
    if (!row) throw new NotFoundError('agent');
    deps.logger.info({ agentId: row.id, version: row.version }, 'agent version saved');
    return sendJson(200, present(row));
  });

  app.openapi(deleteRoute, async (c) => {
    if (!(await deleteSavedAgent(pool, c.get('tenant'), c.req.valid('param').id))) throw new NotFoundError('agent');
    return c.body(null, 204);
  });

  app.openapi(versionsRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listSavedAgentVersions(pool, c.get('tenant'), c.req.valid('param').id, pageLimit(q.limit), requireCursor(q.cursor, decodeAgentVersionCursor));
    if (!page) throw new NotFoundError('agent');
    return sendJson(200, page);
  });

  app.openapi(versionRoute, async (c) => {
    const p = c.req.valid('param');
    const row = await getSavedAgent(pool, c.get('tenant'), p.id, versionOf(p.version));
    if (!row) throw new NotFoundError('agent version');
    return sendJson(200, present(row));
  });
}
