/**
 * What a run start re-checks of a saved graph. A definition is validated when it is saved, but
 * the world it was checked against can change afterwards: a deployment can drop a tool module,
 * an operator can lower the node cap. Without this check such a run would start and fail later,
 * on the node that names the missing tool; with it the start is refused at once, keyed to the
 * node, and nothing is created.
 */
import type { Graph, Issue } from '../model';
import { isMcpToolName, mcpIssues, type McpCatalog } from './mcp-ref';
import { listTools } from './node';
import type { ToolCatalog } from './types';
import { q } from './util';

/** What the start is judged against: the node cap and the tool catalog as they are now. */
export interface StartCheckOptions {
  maxNodes: number;
  tools: ToolCatalog;
  /** the tenant's MCP servers now and the listings read for this start; absent = `mcp:` tools not judged */
  mcp?: McpCatalog;
}

/**
 * The reasons a run of `graph` cannot start now (empty: it can): more nodes than the cap
 * allows, a Tool node whose tool is no longer registered, an Agent offering such a tool, and
 * (with `opts.mcp`) an `mcp:` tool whose server is gone or whose server no longer lists it.
 * Cheap (one pass over the nodes): it runs on every start.
 */
export function startIssues(graph: Graph, opts: StartCheckOptions): Issue[] {
  const issues: Issue[] = [];
  if (graph.nodes.length > opts.maxNodes) {
    issues.push({ key: null, message: `the graph has ${graph.nodes.length} nodes; at most ${opts.maxNodes} are allowed now` });
  }
  for (const node of graph.nodes) {
    const named =
      node.kind === 'Tool' && typeof node.config.toolName === 'string'
        ? [node.config.toolName]
        : node.kind === 'Agent' && Array.isArray(node.config.tools)
          ? node.config.tools.filter((t): t is string => typeof t === 'string')
          : [];
    for (const tool of named) {
      // an MCP tool is judged against its server's listing below, not the registry
      if (isMcpToolName(tool)) continue;
      if (!opts.tools.has(tool)) {
        issues.push({ key: node.key, message: `tool ${q(tool)} is no longer registered; this node may name only ${listTools(opts.tools)}` });
      }
    }
  }
  if (opts.mcp !== undefined) issues.push(...mcpIssues(graph.nodes, opts.mcp));
  return issues;
}
