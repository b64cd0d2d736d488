/**
 * What a connection to an MCP server is made from. Remote servers (streamable HTTP, or the
 * older HTTP+SSE transport) are a tenant's, registered through `/v1/mcp-servers`; stdio
 * servers are the deployment's own, read from the file named by MCP_STDIO_SERVERS_FILE —
 * never from the API, so no API call can make a worker start a process.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { MCP_SERVER_NAME_PATTERN } from '@flowline/graph';

/** Default per-call timeout of a stdio server without its own `timeoutMs`, ms. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

interface SpecBase {
  name: string;
  /** the tools a graph may use; null = every tool the server lists */
  allowedTools: readonly string[] | null;
  /** per-call timeout, ms (the attempt's deadline still bounds it) */
  timeoutMs: number;
  /** grows on every change of the server: a cached connection of another version is replaced */
  version: number;
}

export interface RemoteServerSpec extends SpecBase {
  transport: 'streamable-http' | 'sse';
  url: string;
  headers: Readonly<Record<string, string>>;
}

export interface StdioServerSpec extends SpecBase {
  transport: 'stdio';
  command: string;
  args: readonly string[];
  /** added to a minimal inherited environment (the SDK's default: PATH, HOME, …) */
  env: Readonly<Record<string, string>>;
  cwd: string | null;
}

export type McpServerSpec = RemoteServerSpec | StdioServerSpec;

const stdioEntrySchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().min(1).nullish(),
    allowedTools: z.array(z.string().min(1)).nullish(),
    timeoutMs: z.number().int().min(1).max(3_600_000).default(DEFAULT_MCP_TIMEOUT_MS),
  })
  .strict();

const stdioFileSchema = z.object({ servers: z.record(z.string().regex(MCP_SERVER_NAME_PATTERN), stdioEntrySchema) }).strict();

/** The stdio servers file is missing, unreadable or malformed: the process must not boot. */
export class McpConfigError extends Error {
  readonly code = 'McpConfigInvalid';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpConfigError';
  }
}

/**
 * Reads the deployment's stdio servers: `{ "servers": { "<name>": { command, args?, env?,
 * cwd?, allowedTools?, timeoutMs? } } }`. `path` null: none.
 * @throws McpConfigError naming the file and the first bad member
 */
export function loadStdioServers(path: string | null): ReadonlyMap<string, StdioServerSpec> {
  if (path === null) return new Map();
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new McpConfigError(`MCP_STDIO_SERVERS_FILE: cannot read ${path} as JSON`, { cause });
  }
  const parsed = stdioFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new McpConfigError(`MCP_STDIO_SERVERS_FILE: ${path}: ${issue?.path.join('.') || '(file)'} ${issue?.message ?? 'is invalid'}`);
  }
  const servers = new Map<string, StdioServerSpec>();
  for (const [name, e] of Object.entries(parsed.data.servers)) {
    servers.set(name, {
      name,
      transport: 'stdio',
      command: e.command,
      args: e.args,
      env: e.env,
      cwd: e.cwd ?? null,
      allowedTools: e.allowedTools ?? null,
      timeoutMs: e.timeoutMs,
      version: 1,
    });
  }
  return servers;
}
