/**
 * Names of MCP tools in a graph: `mcp:<server>/<tool>` (a Tool node's `toolName`, an
 * Agent's `tools`) and `mcp:<server>/*` (an Agent only: every tool the server lists). The
 * server is a tenant's registered MCP server (`/v1/mcp-servers`) or one of the deployment's
 * stdio servers; which servers exist and which tools they list is the caller's knowledge,
 * handed in as an {@link McpCatalog} — this module only reads the names.
 */
import type { Issue } from '../model';
import { q } from './util';

/** The prefix that marks a tool name as an MCP tool. */
export const MCP_TOOL_PREFIX = 'mcp:';

/** What a server may be called: the API refuses any other name. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** An MCP tool name as servers spell them (the MCP specification's recommended alphabet, up to 128). */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.\-/]{1,128}$/;

/** A parsed `mcp:` name; `tool` is null for the wildcard `mcp:<server>/*`. */
export interface McpToolRef {
  server: string;
  tool: string | null;
}

/**
 * What the caller knows of MCP servers: the servers the tenant may name and, where it could
 * read them, the tools each lists. A server absent from `listed` is not judged on its tools
 * (its listing was not read: unreachable, or the caller did not ask).
 */
export interface McpCatalog {
  servers: ReadonlySet<string>;
  listed?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** true when `name` is meant as an MCP tool (whether or not it is well formed). */
export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}

/**
 * Parses `mcp:<server>/<tool>` or `mcp:<server>/*`; an error message when the name is
 * malformed (the caller keys it to its node).
 */
export function parseMcpToolRef(name: string): McpToolRef | { error: string } {
  if (!isMcpToolName(name)) return { error: `${q(name)} is not an MCP tool name (mcp:<server>/<tool>)` };
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const slash = rest.indexOf('/');
  const server = slash < 0 ? rest : rest.slice(0, slash);
  const tool = slash < 0 ? '' : rest.slice(slash + 1);
  if (!MCP_SERVER_NAME_PATTERN.test(server)) {
    return { error: `MCP tool ${q(name)}: the server name must be 1–64 of [A-Za-z0-9_-] (mcp:<server>/<tool>)` };
  }
  if (tool === '*') return { server, tool: null };
  if (!MCP_TOOL_NAME_PATTERN.test(tool)) {
    return { error: `MCP tool ${q(name)}: the tool name must be 1–128 of [A-Za-z0-9_./-] (mcp:<server>/<tool>)` };
  }
  return { server, tool };
}

/** The `mcp:` names of a node's config (a Tool's `toolName`, an Agent's `tools`), in order. */
export function mcpNamesOf(kind: string, config: Readonly<Record<string, unknown>>): string[] {
  const names =
    kind === 'Tool' && typeof config.toolName === 'string'
      ? [config.toolName]
      : kind === 'Agent' && Array.isArray(config.tools)
        ? config.tools.filter((t): t is string => typeof t === 'string')
        : [];
  return names.filter(isMcpToolName);
}

/** The servers a graph's nodes name through `mcp:` tools (distinct, in first-seen order). */
export function mcpServersOf(graph: { nodes?: unknown }): string[] {
  const seen = new Set<string>();
  const nodes = Array.isArray(graph.nodes) ? (graph.nodes as unknown[]) : [];
  for (const node of nodes) {
    if (node === null || typeof node !== 'object') continue;
    const n = node as { kind?: unknown; config?: unknown };
    if (typeof n.kind !== 'string' || n.config === null || typeof n.config !== 'object') continue;
    for (const name of mcpNamesOf(n.kind, n.config as Record<string, unknown>)) {
      const ref = parseMcpToolRef(name);
      if (!('error' in ref)) seen.add(ref.server);
    }
  }
  return [...seen];
}

/**
 * The problems of one `mcp:` name on a node of `kind`: malformed, a wildcard on a Tool node,
 * a server the catalog does not hold, a tool its known listing lacks. `catalog` absent: only
 * the form is judged.
 */
export function mcpNameErrors(kind: 'Tool' | 'Agent', name: string, catalog: McpCatalog | undefined): string[] {
  const ref = parseMcpToolRef(name);
  if ('error' in ref) return [ref.error];
  if (ref.tool === null && kind === 'Tool') return [`a Tool node calls one tool: ${q(name)} is a wildcard (name the tool)`];
  if (catalog === undefined) return [];
  if (!catalog.servers.has(ref.server)) return [`unknown MCP server ${q(ref.server)} (not registered for this tenant nor configured by the deployment)`];
  const listed = catalog.listed?.get(ref.server);
  if (listed !== undefined && ref.tool !== null && !listed.has(ref.tool)) {
    return [`MCP server ${q(ref.server)} does not list the tool ${q(ref.tool)} now`];
  }
  return [];
}

/** {@link mcpNameErrors} over a graph's nodes, keyed to each node. */
export function mcpIssues(nodes: ReadonlyArray<{ key: string; kind: string; config: Readonly<Record<string, unknown>> }>, catalog: McpCatalog): Issue[] {
  const issues: Issue[] = [];
  for (const node of nodes) {
    if (node.kind !== 'Tool' && node.kind !== 'Agent') continue;
    for (const name of mcpNamesOf(node.kind, node.config)) {
      for (const message of mcpNameErrors(node.kind, name, catalog)) issues.push({ key: node.key, message });
    }
  }
  return issues;
}
