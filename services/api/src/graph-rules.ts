/**
 * The API's use of the pure graph core: parse a submitted document (all errors at once),
 * hash it, and check a run input against the graph's and its Start node's input schemas.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, parseGraph, startIssues, storedDocumentText, validateJson, type Graph, type Issue, type McpCatalog, type SavedAgentCatalog, type ToolCatalog } from '@flowline/graph';
import { DefinitionDisabledError, GraphInvalidError, InputTooLargeError, RunInputInvalidError } from './errors';
import { jsonText } from './body';
import { startCatalogFor, type ReadCatalog } from './mcp-catalog';

export type GraphCheck = { ok: true; graph: Graph; warnings: Issue[] } | { ok: false; errors: Issue[]; warnings: Issue[] };

/**
 * Parses and validates a graph document against the node cap, the live tool catalog and,
 * when given, the tenant's definitions (Subworkflow, Loop), MCP servers and saved agents among
 * those it names.
 */
export function checkGraph(
  doc: unknown,
  maxNodes: number,
  tools: ToolCatalog,
  definitions?: ReadonlySet<string>,
  mcp?: McpCatalog,
  agents?: SavedAgentCatalog,
): GraphCheck {
  return parseGraph(doc, {
    maxNodes, tools, ...(definitions !== undefined ? { definitions } : {}), ...(mcp !== undefined ? { mcp } : {}), ...(agents !== undefined ? { agents } : {}),
  });
}

/**
 * Refuses a start the saved definition can no longer honour: disabled (409
 * `DefinitionDisabled`), or its graph names a tool no longer registered, an MCP server the
 * tenant no longer has or an MCP tool its server no longer lists, or is over the node cap as
 * it is now (400 `GraphInvalid`, keyed to the node). Runs inside the creating transaction, so
 * a refusal creates nothing; a graph naming MCP servers `mcp` does not cover throws
 * McpCatalogNeeded (mcp-catalog.ts) for the start to read them and try again.
 */
export function checkStartable(def: { enabled: boolean; planGraph: unknown }, maxNodes: number, tools: ToolCatalog, mcp: ReadCatalog | null = null): Graph {
  if (!def.enabled) throw new DefinitionDisabledError();
  const graph = def.planGraph as Graph;
  const catalog = startCatalogFor(graph, mcp);
  const issues = startIssues(graph, { maxNodes, tools, ...(catalog !== undefined ? { mcp: catalog } : {}) });
  if (issues.length > 0) throw new GraphInvalidError(issues, []);
  return graph;
}

/**
 * Re-parses a graph document saved earlier (a version stored without its parsed graph):
 * members the contract does not know are ignored with a warning rather than refused, so a
 * definition stored before documents were closed keeps loading.
 */
export function checkStoredGraph(doc: unknown, maxNodes: number, tools: ToolCatalog): GraphCheck {
  return parseGraph(doc, { maxNodes, tools, stored: true });
}

/**
 * The parsed graph of a definition version a run is moved onto (a fork's or a migration's
 * target): its stored model when the store had one, else the saved document parsed again, with
 * the JSON text of that model for the store to pin. A document that no longer parses is
 * GraphInvalid.
 */
export function targetPlanGraph(
  target: { graph: unknown; planGraph: Graph | null },
  maxNodes: number,
  tools: ToolCatalog,
): { planGraph: Graph; planGraphJson: string | null } {
  if (target.planGraph !== null) return { planGraph: target.planGraph, planGraphJson: null };
  const parsed = checkStoredGraph(target.graph, maxNodes, tools);
  if (!parsed.ok) throw new GraphInvalidError(parsed.errors, parsed.warnings);
  return { planGraph: parsed.graph, planGraphJson: jsonText(parsed.graph) };
}

/** sha256 (hex) of the canonical JSON of the document as submitted. */
export function graphHash(doc: unknown): string {
  return createHash('sha256').update(canonicalJson(doc), 'utf8').digest('hex');
}

/**
 * The run input to store: the given input, else the Start node's `defaultInput`, else `{}`.
 * Refuses (400) an input over `maxBytes` UTF-8 bytes of JSON, or one failing the graph's
 * `inputSchema` or the Start node's `config.inputSchema` (both apply).
 * @returns the input's JSON text
 */
/** The input a run starts with: the given one, else the Start node's `defaultInput`, else `{}`. */
export function effectiveRunInput(graph: Graph, given: unknown): unknown {
  const start = graph.nodes.find((n) => n.kind === 'Start');
  return given !== undefined ? given : (start?.config.defaultInput ?? {});
}

/**
 * UTF-8 bytes of a document as it will be stored: its JSON text, or the verbatim envelope
 * that text is kept in when it holds a number written with an exponent (which jsonb would
 * otherwise spell out in full). The input caps count this.
 */
export function storedBytes(jsonText: string): number {
  return Buffer.byteLength(storedDocumentText(jsonText), 'utf8');
}

export function checkRunInput(graph: Graph, given: unknown, maxBytes: number): string {
  const input = effectiveRunInput(graph, given);
  const start = graph.nodes.find((n) => n.kind === 'Start');
  const text = jsonText(input);
  const bytes = storedBytes(text);
  if (bytes > maxBytes) throw new InputTooLargeError(bytes, maxBytes);
  // validated as plain JSON (big numbers as their nearest double, which every schema keyword accepts)
  const plain: unknown = JSON.parse(text);
  const schemas: Array<[string, unknown]> = [];
  if (graph.inputSchema) schemas.push(['inputSchema', graph.inputSchema]);
  if (start?.config.inputSchema) schemas.push([`${start.key}.config.inputSchema`, start.config.inputSchema]);
  const issues: Issue[] = [];
  for (const [where, schema] of schemas) {
    const v = validateJson(schema, plain);
    if (!v.valid) for (const e of v.errors) issues.push({ key: where, message: `input ${e}` });
  }
  if (issues.length > 0) throw new RunInputInvalidError('run input fails the graph input schema', issues);
  return text;
}
