/**
 * MCP tools as Flowline uses them: a Tool node's `mcp:<server>/<tool>` and an Agent's MCP
 * tools. The server is resolved for the run's tenant by the caller's `resolve` (the
 * tenant's registered servers from Postgres, the deployment's stdio servers from its file);
 * the tool must be listed by the server and allowed by its `allowedTools`; the arguments are
 * checked against the tool's `inputSchema` before the call. The result becomes
 * `{ text, structured, content }`: the text blocks joined, the structured content (null
 * without), and every content block as the server sent it. Progress notifications reach
 * `onProgress`; aborting the invocation's signal cancels the request on the server (the SDK
 * sends `notifications/cancelled`).
 */
import { parseMcpToolRef, type Json, type JsonObject } from '@flowline/graph';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, abortError, throwIfAborted, toolInvalid } from '../tool-error';
import type { ToolLogger } from '../tool-definition';
import { ConnectionPool, type Connection, type ListedTool } from './connections';
import { classifyMcpError } from './errors';
import { parseAllowedHosts, type AllowedHosts } from './network-guard';
import { loadStdioServers, type McpServerSpec } from './server-spec';

/** One tool of a server, as an Agent offers it. */
export interface McpToolInfo {
  /** `mcp:<server>/<tool>` */
  ref: string;
  server: string;
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/** A progress notification of a call in flight. */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A progress notification as an activity `phase` entry: `progress 2/5`, `progress 2/5: <message>`. */
export function mcpProgressText(p: McpProgress): string {
  const amount = p.total === undefined ? `${p.progress}` : `${p.progress}/${p.total}`;
  return p.message ? `progress ${amount}: ${p.message}` : `progress ${amount}`;
}

/**
 * The function name an LLM is offered for an MCP tool: `mcp__<server>__<tool>` in the
 * alphabet providers accept (`[A-Za-z0-9_-]`, at most 64), other characters as `_`. The
 * Agent maps a called name back to its tool (a clash within one Agent gets a numbered suffix).
 */
export function mcpFunctionName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export interface McpCallContext {
  signal: AbortSignal;
  /**
   * The call's stable idempotency key (an Agent's `<runId>:<nodeKey>:<step>`), sent in the
   * request's `_meta` as `io.flowline/idempotency-key` so a server can dedupe a call repeated
   * after a crash. Absent: none is sent.
   */
  idempotencyKey?: string;
  onProgress?: (p: McpProgress) => void;
  logger?: ToolLogger;
}

export interface McpToolboxOptions {
  /** the tenant's registered server `name` (Postgres); null when it has none of that name */
  resolve(tenant: string, name: string): Promise<McpServerSpec | null>;
  /** the deployment's stdio servers (MCP_STDIO_SERVERS_FILE), named by a tenant without one of its own of that name @default none */
  stdioServers?: ReadonlyMap<string, McpServerSpec>;
  /** MCP_ALLOWED_HOSTS: hosts whose private addresses may be reached @default none */
  allowedHosts?: AllowedHosts;
  /** false (the API): stdio servers are never started, their listings never read @default true */
  spawnStdio?: boolean;
  /** MCP_MAX_CONNECTIONS: open sessions kept; the least recently used idle one is closed beyond @default 64 */
  maxConnections?: number;
  /** MCP_CONNECT_TIMEOUT_MS: how long opening a session may take, ms @default 10000 */
  connectTimeoutMs?: number;
  logger?: ToolLogger;
}

export interface McpToolbox {
  /**
   * The tools a name stands for: the one named, or for `mcp:<server>/*` every tool the
   * server lists that its `allowedTools` admits.
   * @throws ToolError as {@link McpToolbox.call} does before calling
   */
  expand(tenant: string, ref: string, signal?: AbortSignal): Promise<McpToolInfo[]>;
  /**
   * Calls an MCP tool.
   * @returns `{ text, structured, content }`
   * @throws ToolError — ValidationFailed (unknown server, tool not listed or not allowed,
   *   arguments refused), NodeFailed (`McpServerUnreachable`, `McpToolFailed`), Timeout, or
   *   the class of the aborted signal
   */
  call(tenant: string, ref: string, args: JsonObject, ctx: McpCallContext): Promise<Json>;
  /**
   * The tools a server lists now (its `allowedTools` applied), for the start check; null when
   * the listing cannot be read here (no such server, unreachable, an address refused, a stdio
   * server where none are started): the call judges it then.
   */
  listedNames(tenant: string, server: string, signal?: AbortSignal): Promise<ReadonlySet<string> | null>;
  /** Closes every session. */
  close(): Promise<void>;
}

/** The `_meta` member of a tools/call request that carries the call's idempotency key. */
export const MCP_IDEMPOTENCY_META_KEY = 'io.flowline/idempotency-key';

/** An error answer's text is cut to this many characters in the node's failure reason. */
export const MCP_ERROR_TEXT_MAX_CHARS = 500;

/** `work`, or the abort error of `signal` as soon as it fires (the work itself goes on for its other waiters). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function keyOf(tenant: string, spec: McpServerSpec): string {
  // a stdio server is the deployment's: one session serves every tenant
  return spec.transport === 'stdio' ? `stdio\u0000${spec.name}` : `${tenant}\u0000${spec.name}`;
}

function allowed(spec: McpServerSpec, tool: string): boolean {
  return spec.allowedTools === null || spec.allowedTools.includes(tool);
}

function textOf(content: ReadonlyArray<{ type: string; text?: unknown }>): string {
  return content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text as string)
    .join('\n');
}

/** Builds the toolbox; sessions open on first use. */
export function createMcpToolbox(opts: McpToolboxOptions): McpToolbox {
  const pool = new ConnectionPool({
    allowedHosts: opts.allowedHosts ?? new Set(),
    spawnStdio: opts.spawnStdio ?? true,
    maxConnections: opts.maxConnections ?? 64,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });

  async function serverOf(tenant: string, name: string): Promise<McpServerSpec> {
    // the tenant's own server of the name wins: a deployment adding one cannot take it over
    const spec = (await opts.resolve(tenant, name)) ?? opts.stdioServers?.get(name) ?? null;
    if (spec === null) throw new ToolError('ValidationFailed', `unknown MCP server ${name}`, { code: 'McpServerUnknown' });
    return spec;
  }

  /** The session and the server's listing; a failed session is discarded so the next call reconnects. */
  async function session(tenant: string, spec: McpServerSpec, signal?: AbortSignal): Promise<{ conn: Connection; tools: ReadonlyMap<string, ListedTool> }> {
    const key = keyOf(tenant, spec);
    const conn = await pool.get(key, spec);
    try {
      return { conn, tools: await untilAborted(conn.tools(), signal) };
    } catch (error) {
      const failure = classifyMcpError(error, signal ?? null, spec.name, null, 'connect');
      if (failure.code === 'McpServerUnreachable') pool.discard(key, conn);
      throw failure;
    }
  }

  function listedTool(spec: McpServerSpec, tools: ReadonlyMap<string, ListedTool>, tool: string): ListedTool {
    const listed = tools.get(tool);
    if (listed === undefined) throw new ToolError('ValidationFailed', `MCP server ${spec.name} does not list the tool ${tool}`, { code: 'McpToolNotListed' });
    if (!allowed(spec, tool)) throw new ToolError('ValidationFailed', `MCP tool ${spec.name}/${tool} is not in the server's allowedTools`, { code: 'McpToolNotListed' });
    return listed;
  }

  function parse(ref: string): { server: string; tool: string | null } {
    const parsed = parseMcpToolRef(ref);
    if ('error' in parsed) throw toolInvalid(parsed.error);
    return parsed;
  }

  return {
    async expand(tenant, ref, signal) {
      const { server, tool } = parse(ref);
      const spec = await serverOf(tenant, server);
      const { tools } = await session(tenant, spec, signal);
      const chosen = tool === null ? [...tools.values()].filter((t) => allowed(spec, t.name)) : [listedTool(spec, tools, tool)];
      return chosen.map((t) => ({ ref: `mcp:${server}/${t.name}`, server, name: t.name, description: t.description, inputSchema: t.inputSchema }));
    },

    async call(tenant, ref, args, ctx) {
      const { server, tool } = parse(ref);
      if (tool === null) throw toolInvalid(`${ref} names every tool of a server; a call names one`);
      const spec = await serverOf(tenant, server);
      const { conn, tools } = await session(tenant, spec, ctx.signal);
      const listed = listedTool(spec, tools, tool);
      if (listed.validate === null) throw toolInvalid(`MCP tool ${server}/${tool}: the server's inputSchema cannot be compiled`);
      if (!listed.validate(args)) {
        // ajv messages name the member and the rule, never the value
        const details = (listed.validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
        throw toolInvalid(`MCP tool ${server}/${tool}: invalid arguments: ${details.join('; ')}`);
      }
      throwIfAborted(ctx.signal);
      conn.inFlight++;
      let result;
      try {
        const meta = ctx.idempotencyKey === undefined ? {} : { _meta: { [MCP_IDEMPOTENCY_META_KEY]: ctx.idempotencyKey } };
        result = await conn.client.callTool({ name: tool, arguments: args, ...meta }, CallToolResultSchema, {
          signal: ctx.signal,
          timeout: spec.timeoutMs,
          ...(ctx.onProgress ? { onprogress: (p: McpProgress) => ctx.onProgress?.(p) } : {}),
        });
      } catch (error) {
        const failure = classifyMcpError(error, ctx.signal, server, tool, 'call');
        if (failure.code === 'McpServerUnreachable') pool.discard(keyOf(tenant, spec), conn);
        throw failure;
      } finally {
        conn.inFlight--;
      }
      const content = (result.content ?? []) as Array<{ type: string; text?: unknown }>;
      const text = textOf(content);
      if (result.isError === true) {
        const said = text.length > MCP_ERROR_TEXT_MAX_CHARS ? `${text.slice(0, MCP_ERROR_TEXT_MAX_CHARS)}…` : text;
        throw new ToolError('NodeFailed', `MCP tool ${server}/${tool} answered an error${said ? `: ${said}` : ''}`, { code: 'McpToolFailed' });
      }
      return { text, structured: (result.structuredContent ?? null) as Json, content: content as unknown as Json };
    },

    async listedNames(tenant, server, signal) {
      try {
        const spec = await serverOf(tenant, server);
        if (spec.transport === 'stdio' && opts.spawnStdio === false) return null;
        const { tools } = await session(tenant, spec, signal);
        return new Set([...tools.keys()].filter((t) => allowed(spec, t)));
      } catch {
        return null;
      }
    },

    close: () => pool.close(),
  };
}

/** The MCP options of a service's config (libs/runtime `mcpOptions`). */
export interface McpConfigOptions {
  MCP_STDIO_SERVERS_FILE?: string | undefined;
  MCP_ALLOWED_HOSTS?: string | undefined;
  MCP_MAX_CONNECTIONS: number;
  MCP_CONNECT_TIMEOUT_MS: number;
}

/**
 * A toolbox from a service's validated options; reads the stdio servers file.
 * @throws McpConfigError when MCP_STDIO_SERVERS_FILE cannot be read or is malformed (boot must stop)
 */
export function mcpToolboxFromConfig(
  config: McpConfigOptions,
  resolve: McpToolboxOptions['resolve'],
  extra: { spawnStdio: boolean; logger?: ToolLogger },
): { toolbox: McpToolbox; stdioNames: ReadonlySet<string> } {
  const stdioServers = loadStdioServers(config.MCP_STDIO_SERVERS_FILE ?? null);
  const toolbox = createMcpToolbox({
    resolve,
    stdioServers,
    allowedHosts: parseAllowedHosts(config.MCP_ALLOWED_HOSTS),
    maxConnections: config.MCP_MAX_CONNECTIONS,
    connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
    ...extra,
  });
  return { toolbox, stdioNames: new Set(stdioServers.keys()) };
}

/**
 * {@link mcpToolboxFromConfig} at a process's boot: a bad MCP_STDIO_SERVERS_FILE stops the
 * process as an invalid option does (every service's loadConfig): the message on stderr, exit 1.
 */
export function bootMcpToolbox(...args: Parameters<typeof mcpToolboxFromConfig>): ReturnType<typeof mcpToolboxFromConfig> {
  try {
    return mcpToolboxFromConfig(...args);
  } catch (err) {
    process.stderr.write(`invalid configuration:\n  ${err instanceof Error ? err.message : 'MCP_STDIO_SERVERS_FILE: cannot load'}\n`);
    process.exit(1);
  }
}
