/**
 * MCP servers, a tenant resource: `POST/GET /v1/mcp-servers`, `GET/PUT/DELETE
 * /v1/mcp-servers/{id}` (`{id}` is the server's id or its name). Remote servers only
 * (streamable HTTP or HTTP+SSE): a stdio server is the deployment's, configured in
 * MCP_STDIO_SERVERS_FILE, so the API can never be made to start a process. `headers` are
 * sealed at rest and never read back — a read shows their names only; a PUT without
 * `headers` keeps them. The URL passes the SSRF guard of `http_fetch` (a private address only
 * for a host in MCP_ALLOWED_HOSTS). A graph names a server's tools as `mcp:<name>/<tool>`.
 * `GET /v1/mcp-servers/{id}/tools` connects and lists them (the console's connection test).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { MCP_SERVER_NAME_PATTERN } from '@flowline/graph';
import {
  createMcpServer,
  deleteMcpServer,
  getMcpServer,
  listMcpServers,
  McpServerNameTakenError,
  updateMcpServer,
  type McpServerInput,
  type McpServerRecord,
} from '@flowline/db';
import { checkServerUrl, DEFAULT_MCP_TIMEOUT_MS, ToolError } from '@flowline/tools';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { ApiError, NotFoundError, ValidationFailedError } from '../errors';
import { ErrorSchema, jsonBody, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';

/** Most headers a server may carry, and the longest value. */
export const MAX_MCP_HEADERS = 32;
export const MAX_MCP_HEADER_VALUE_CHARS = 8_192;
/** Most entries of `allowedTools`. */
export const MAX_MCP_ALLOWED_TOOLS = 256;
/** Longest per-call timeout a server may ask for, ms (the node's attempt deadline still bounds every call). */
export const MAX_MCP_TIMEOUT_MS = 3_600_000;

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// an HTTP header name (RFC 9110 token)
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** Another of the tenant's servers, or a stdio server of the deployment, has the name. */
export class McpServerNameTakenApiError extends ApiError {
  constructor(name: string, stdio: boolean) {
    super(409, 'McpServerNameTaken', stdio ? `${name} is the name of a stdio MCP server of this deployment` : `an MCP server named ${name} already exists`);
  }
}

const McpServerBody = z
  .object({
    name: z
      .string()
      .regex(MCP_SERVER_NAME_PATTERN)
      .refine((n) => !UUID_SHAPE.test(n), 'a name must not look like an id')
      .openapi({ description: 'how graphs name it: `mcp:<name>/<tool>`; 1–64 of [A-Za-z0-9_-], unique in the tenant' }),
    url: z.string().min(1).max(2_048).openapi({ description: 'the server endpoint, absolute http(s); private addresses only for hosts in MCP_ALLOWED_HOSTS' }),
    transport: z.enum(['streamable-http', 'sse']).openapi({ description: '`streamable-http` (current MCP), or `sse` (the older HTTP+SSE transport)' }),
    headers: z
      .record(z.string().regex(HEADER_NAME), z.string().max(MAX_MCP_HEADER_VALUE_CHARS))
      .refine((h) => Object.keys(h).length <= MAX_MCP_HEADERS, `at most ${MAX_MCP_HEADERS} headers`)
      .optional()
      .openapi({ description: 'sent on every request (credentials, typically); sealed at rest, never read back. On PUT, absent keeps the stored ones, `{}` clears them' }),
    allowedTools: z
      .array(z.string().min(1).max(128))
      .max(MAX_MCP_ALLOWED_TOOLS)
      .nullish()
      .openapi({ description: 'the tools graphs may use; absent or null = every tool the server lists' }),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_MCP_TIMEOUT_MS)
      .optional()
      .openapi({ description: `per-call timeout, ms (default ${DEFAULT_MCP_TIMEOUT_MS}); the node's attempt deadline bounds it too` }),
  })
  .strict()
  .openapi('McpServerInput');

const McpServerSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    name: z.string(),
    url: z.string(),
    transport: z.enum(['streamable-http', 'sse']),
    headerNames: z.array(z.string()).openapi({ description: 'the names of the stored headers (their values are never read back)' }),
    allowedTools: z.array(z.string()).nullable(),
    timeoutMs: z.number().int(),
    version: z.number().int().openapi({ description: 'grows on every update (workers reconnect to the new version)' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('McpServer');

const McpServerListSchema = z.object({ items: z.array(McpServerSchema) }).openapi('McpServerList');
const RefParam = z.object({ id: z.string().min(1).max(64).openapi({ param: { name: 'id', in: 'path' }, description: "the server's id or name" }) });

const nameTaken = jsonContent(ErrorSchema, 'McpServerNameTaken: another server of the tenant, or a stdio server of the deployment, has the name');
const createServerRoute = v1Route.mcpServers('post', '/v1/mcp-servers', {
  operationId: 'createMcpServer', summary: 'Register an MCP server (streamable HTTP or SSE) for the tenant',
  request: { body: jsonBody(McpServerBody) },
  responses: { 201: jsonContent(McpServerSchema, 'registered (headers not shown)'), 409: nameTaken },
});
const listRoute = v1Route.mcpServers('get', '/v1/mcp-servers', {
  operationId: 'listMcpServers', summary: "The tenant's MCP servers, by name",
  responses: { 200: jsonContent(McpServerListSchema, 'every server of the tenant (stdio servers of the deployment are not listed)') },
});
const getRoute = v1Route.mcpServers('get', '/v1/mcp-servers/{id}', {
  operationId: 'getMcpServer', summary: 'An MCP server (by id or name)',
  request: { params: RefParam },
  responses: { 200: jsonContent(McpServerSchema, 'the server (headers not shown)') },
});
const putRoute = v1Route.mcpServers('put', '/v1/mcp-servers/{id}', {
  operationId: 'updateMcpServer', summary: 'Replace an MCP server (by id or name); absent headers are kept',
  request: { params: RefParam, body: jsonBody(McpServerBody) },
  responses: { 200: jsonContent(McpServerSchema, 'replaced, version + 1'), 409: nameTaken },
});
const deleteRoute = v1Route.mcpServers('delete', '/v1/mcp-servers/{id}', {
  operationId: 'deleteMcpServer', summary: 'Delete an MCP server (by id or name)',
  description: 'Definitions naming its tools stay saved; a run start of one is then refused 400 `GraphInvalid` (unknown MCP server), keyed to the node.',
  request: { params: RefParam },
  responses: { 204: { description: 'deleted' } },
});

const McpToolListSchema = z
  .object({
    items: z.array(
      z.object({
        ref: z.string().openapi({ description: 'how a graph names it: `mcp:<server>/<tool>`' }),
        name: z.string(),
        description: z.string(),
        inputSchema: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .openapi('McpToolList');
const toolsRoute = v1Route.mcpServers('get', '/v1/mcp-servers/{id}/tools', {
  operationId: 'listMcpServerTools', summary: "Connect to an MCP server and list its tools (a connection test)",
  description:
    "The tools the server lists now, its `allowedTools` applied. The server is reached as a run would reach it (SSRF guard, its headers, " +
    'MCP_CONNECT_TIMEOUT_MS). An unreachable server, or one that refuses the session, answers 502 `McpServerUnreachable`.',
  request: { params: RefParam },
  responses: { 200: jsonContent(McpToolListSchema, 'the listed tools'), 502: jsonContent(ErrorSchema, 'McpServerUnreachable: the server could not be listed') },
});

/** The server could not be listed: unreachable, refused, or an address the guard refuses. */
export class McpServerUnreachableApiError extends ApiError {
  constructor(message: string) {
    super(502, 'McpServerUnreachable', message);
  }
}

function present(r: McpServerRecord) {
  return {
    id: r.id, name: r.name, url: r.url, transport: r.transport, headerNames: r.headerNames,
    allowedTools: r.allowedTools, timeoutMs: r.timeoutMs, version: r.version, createdAt: r.createdAt, updatedAt: r.updatedAt,
  };
}

/** Registers the MCP server routes. */
export function registerMcpServerRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;
  const stdioNames = deps.mcp?.stdioNames ?? new Set<string>();

  /** The body as the store takes it, after the URL guard and the stdio name check. */
  function inputOf(body: z.output<typeof McpServerBody>): McpServerInput {
    if (stdioNames.has(body.name)) throw new McpServerNameTakenApiError(body.name, true);
    try {
      checkServerUrl(body.url, deps.mcp?.allowedHosts ?? new Set());
    } catch (err) {
      if (err instanceof ToolError) throw new ValidationFailedError(err.message, [{ key: 'url', message: err.message }]);
      throw err;
    }
    const allowedTools = body.allowedTools ?? null;
    if (allowedTools !== null && new Set(allowedTools).size !== allowedTools.length) {
      throw new ValidationFailedError('allowedTools names a tool twice', [{ key: 'allowedTools', message: 'names a tool twice' }]);
    }
    return {
      name: body.name, url: body.url, transport: body.transport, allowedTools,
      timeoutMs: body.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS, ...(body.headers !== undefined ? { headers: body.headers } : {}),
    };
  }

  const taken = (err: unknown): never => {
    if (err instanceof McpServerNameTakenError) throw new McpServerNameTakenApiError(err.serverName, false);
    throw err;
  };

  app.openapi(createServerRoute, async (c) => {
    const row = await createMcpServer(pool, c.get('tenant'), inputOf(c.req.valid('json'))).catch(taken);
    deps.logger.info({ mcpServerId: row.id, name: row.name }, 'mcp server registered');
    return sendJson(201, present(row), { location: `/v1/mcp-servers/${row.id}` });
  });

  app.openapi(listRoute, async (c) => sendJson(200, { items: (await listMcpServers(pool, c.get('tenant'))).map(present) }));

  app.openapi(getRoute, async (c) => {
    const row = await getMcpServer(pool, c.get('tenant'), c.req.valid('param').id);
    if (!row) throw new NotFoundError('mcp server');
    return sendJson(200, present(row));
  });

  app.openapi(putRoute, async (c) => {
    const row = await updateMcpServer(pool, c.get('tenant'), c.req.valid('param').id, inputOf(c.req.valid('json'))).catch(taken);
    if (!row) throw new NotFoundError('mcp server');
    return sendJson(200, present(row));
  });

  app.openapi(toolsRoute, async (c) => {
    const tenant = c.get('tenant');
    const row = await getMcpServer(pool, tenant, c.req.valid('param').id);
    if (!row) throw new NotFoundError('mcp server');
    const toolbox = deps.mcp?.toolbox ?? null;
    if (toolbox === null) throw new McpServerUnreachableApiError('this deployment reads no MCP listings in the API');
    try {
      const tools = await toolbox.expand(tenant, `mcp:${row.name}/*`, c.req.raw.signal);
      return sendJson(200, { items: tools.map((t) => ({ ref: t.ref, name: t.name, description: t.description, inputSchema: t.inputSchema })) });
    } catch (err) {
      if (err instanceof ToolError) throw new McpServerUnreachableApiError(err.message);
      throw err;
    }
  });

  app.openapi(deleteRoute, async (c) => {
    if (!(await deleteMcpServer(pool, c.get('tenant'), c.req.valid('param').id))) throw new NotFoundError('mcp server');
    return c.body(null, 204);
  });
}
