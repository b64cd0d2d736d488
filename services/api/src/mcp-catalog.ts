/**
 * What the API knows of a tenant's MCP servers when it judges a graph: which of the servers
 * a graph names exist (the tenant's registered ones in Postgres, the deployment's stdio ones
 * from MCP_STDIO_SERVERS_FILE) and, for a run start, which tools each lists now.
 *
 * A run start reads the listings outside its transaction (a network call must not hold a
 * transaction open) and only for a definition that names MCP tools: the start's `prepare`
 * (inside the transaction) throws {@link McpCatalogNeeded} when the pinned graph names
 * servers the catalog in hand does not cover; the start is then run again with them read.
 * A listing that cannot be read in MCP_START_CHECK_TIMEOUT_MS (server unreachable, a stdio
 * server the API never starts) is not judged here: the call judges the tool then.
 */
import type { Pool } from 'pg';
import { existingMcpServerNames } from '@flowline/db';
import { mcpServersOf, type McpCatalog } from '@flowline/graph';
import type { AllowedHosts, McpToolbox } from '@flowline/tools';

/** The MCP side of the API's dependencies. */
export interface ApiMcp {
  /** lists remote servers' tools at a run start; null = listings are never read (only server existence is judged) */
  toolbox: McpToolbox | null;
  /** the deployment's stdio servers (MCP_STDIO_SERVERS_FILE): every tenant may name them */
  stdioNames: ReadonlySet<string>;
  /** MCP_ALLOWED_HOSTS: a server URL's private address is refused outside these */
  allowedHosts: AllowedHosts;
  /** MCP_START_CHECK_TIMEOUT_MS: how long a start waits for a server's listing @default 3000 */
  startCheckTimeoutMs?: number;
}

/** Thrown by a start's `prepare`: the graph names MCP servers the catalog in hand does not cover. */
export class McpCatalogNeeded extends Error {
  constructor(readonly servers: string[]) {
    super('the graph names MCP servers not read yet');
    this.name = 'McpCatalogNeeded';
  }
}

/** A catalog and the servers it was read for. */
export interface ReadCatalog {
  catalog: McpCatalog;
  covers: ReadonlySet<string>;
}

/** Which of `servers` the tenant may name (no listings). */
export async function mcpServersCatalog(pool: Pool, mcp: ApiMcp | undefined, tenant: string, servers: readonly string[]): Promise<McpCatalog> {
  const registered = await existingMcpServerNames(pool, tenant, servers);
  for (const s of servers) if (mcp?.stdioNames.has(s)) registered.add(s);
  return { servers: registered };
}

async function listedWithin(toolbox: McpToolbox, tenant: string, server: string, ms: number): Promise<ReadonlySet<string> | null> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    return await Promise.race([
      toolbox.listedNames(tenant, server, ac.signal),
      new Promise<null>((resolve) => ac.signal.addEventListener('abort', () => resolve(null), { once: true })),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The catalog of `servers` with each one's listing read (in parallel, each bounded). */
export async function readStartCatalog(pool: Pool, mcp: ApiMcp | undefined, tenant: string, servers: readonly string[]): Promise<ReadCatalog> {
  const { servers: existing } = await mcpServersCatalog(pool, mcp, tenant, servers);
  const listed = new Map<string, ReadonlySet<string>>();
  const toolbox = mcp?.toolbox ?? null;
  if (toolbox !== null) {
    const ms = mcp?.startCheckTimeoutMs ?? 3_000;
    const reads = await Promise.all([...existing].map(async (s) => [s, await listedWithin(toolbox, tenant, s, ms)] as const));
    for (const [s, names] of reads) if (names !== null) listed.set(s, names);
  }
  return { catalog: { servers: existing, listed }, covers: new Set(servers) };
}

/**
 * The catalog a start's `prepare` judges `graph` with: null when it names no MCP server.
 * @throws McpCatalogNeeded when it names servers `read` does not cover
 */
export function startCatalogFor(graph: unknown, read: ReadCatalog | null): McpCatalog | undefined {
  const named = mcpServersOf(graph as { nodes?: unknown });
  if (named.length === 0) return undefined;
  const missing = named.filter((s) => !read?.covers.has(s));
  if (missing.length > 0) throw new McpCatalogNeeded([...(read?.covers ?? []), ...missing]);
  return read?.catalog;
}

/**
 * Runs a start: first without a catalog (a graph naming no MCP server never waits on one),
 * then, if its `prepare` asked for one, with the servers it named read — at most three times
 * (the definition may change between tries).
 */
export async function withStartCatalog<T>(pool: Pool, mcp: ApiMcp | undefined, tenant: string, start: (read: ReadCatalog | null) => Promise<T>): Promise<T> {
  let read: ReadCatalog | null = null;
  for (let tries = 1; ; tries++) {
    try {
      return await start(read);
    } catch (err) {
      if (!(err instanceof McpCatalogNeeded) || tries >= 3) throw err;
      read = await readStartCatalog(pool, mcp, tenant, err.servers);
    }
  }
}
