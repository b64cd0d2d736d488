/**
 * What a run start re-checks of a saved graph. A definition is validated when it is saved, but
 * the world it was checked against can change afterwards: a deployment can drop a tool module,
 * an operator can lower the node cap. Without this check such a run would start and fail later,
 * on the node that names the missing tool; with it the start is refused at once, keyed to the
 * node, and nothing is created.
 */
import type { Graph, Issue } from '../model';
import { listTools } from './node';
import type { ToolCatalog } from './types';
import { q } from './util';

/** What the start is judged against: the node cap and the tool catalog as they are now. */
export interface StartCheckOptions {
  maxNodes: number;
  tools: ToolCatalog;
}

/**
 * The reasons a run of `graph` cannot start now (empty: it can): more nodes than the cap
 * allows, a Tool node whose tool is no longer registered, an Agent offering such a tool.
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
      if (!opts.tools.has(tool)) {
        issues.push({ key: node.key, message: `tool ${q(tool)} is no longer registered; this node may name only ${listTools(opts.tools)}` });
      }
    }
  }
  return issues;
}
