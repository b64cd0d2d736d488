import type { Graph, Issue } from '../model';
import type { McpCatalog } from './mcp-ref';
import type { SavedAgentCatalog } from './agent-ref';

/** Tools a Tool node may name (GET /v1/tools); `http_fetch` is the one that requires `allowedUrls`. */
export type ToolCatalog = ReadonlyMap<string, { requiresAllowedUrls: boolean }>;

/** What the parser needs from its caller: the node cap, the live tool catalog and the definitions that exist. */
export interface ParseOptions {
  /** MAX_NODES_PER_DEFINITION; `Infinity` re-parses a stored graph uncapped. */
  maxNodes: number;
  tools: ToolCatalog;
  /**
   * The ids (lower case) of the tenant's definitions among those the graph names
   * ({@link definitionReferences}): a Subworkflow `config.definitionId` or Loop
   * `config.body` outside it is an error keyed to the node. Absent: references are not
   * judged (a stored graph re-parsed).
   */
  definitions?: ReadonlySet<string>;
  /**
   * The tenant's MCP servers (those it registered and the deployment's stdio servers): a
   * `mcp:<server>/…` tool naming another server is an error keyed to the node. Absent: only
   * the form of `mcp:` names is judged (a stored graph re-parsed).
   */
  mcp?: McpCatalog;
  /**
   * The tenant's saved agents among those the graph's Agent nodes name
   * (`config.agentDefinitionId`, see {@link agentReferences}), id (lower case) → latest
   * version: another id, or an `agentVersion` past the latest, is an error keyed to the node.
   * Absent: references are not judged (a stored graph re-parsed).
   */
  agents?: SavedAgentCatalog;
  /**
   * true re-parses a document saved earlier: members the contract does not know (on the
   * graph, a node or an edge) are ignored with a warning, so a definition stored before
   * documents were closed keeps loading. Absent/false (save, validate): each is an error,
   * as a compile step refuses an entry it does not know. @default false
   */
  stored?: boolean;
}

/** Outcome of {@link parseGraph}: the graph with defaults filled in, or every error at once. */
export type ParseResult =
  | { ok: true; graph: Graph; warnings: Issue[] }
  | { ok: false; errors: Issue[]; warnings: Issue[] };

/** The validate route's answer (`valid` = no errors). */
export interface GraphValidation {
  valid: boolean;
  errors: Issue[];
  warnings: Issue[];
}
