/** The shape of a tool: what a Tool node names and an Agent may call. */
import type { InputDocument, Json, JsonObject } from '@flowline/graph';

/** Structured logger subset (pino-compatible). Never log arguments or results. */
export interface ToolLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** What one invocation of a tool is handed besides its arguments. */
export interface ToolContext {
  /** fires on deadline (reason: Timeout ToolError), cancellation or shutdown */
  signal: AbortSignal;
  /** the Tool node's `allowedUrls` (absolute http(s) prefixes); empty when none */
  allowedUrls: readonly string[];
  /** TOOL_FILES_ROOT; null when the deployment set none */
  filesRoot: string | null;
  /** the run the node belongs to */
  runId: string;
  /** the node's key in the run's graph */
  nodeKey: string;
  /** 1-based attempt of the node */
  attempt: number;
  /** this attempt's invocation (a new one on every attempt) */
  invocationId: string;
  /** the node's input document (CONTRACT §3): run input, upstream envelopes, its input */
  input: InputDocument;
  /**
   * `<runId>:<nodeKey>` (an Agent's calls add `:<step>`, the transcript step recording the call): the
   * same on every retry and replay of the node, so a tool with side effects can hand it to
   * the system it calls and have a repeat deduplicated. Never the attempt alone.
   */
  idempotencyKey: string;
  logger?: ToolLogger;
}

/** A read-only tool. Modules listed in TOOL_MODULES export `tools: ToolDefinition[]`. */
export interface ToolDefinition {
  /** unique name a Tool node's `toolName` refers to; `[A-Za-z0-9_.-]{1,64}` */
  name: string;
  description: string;
  /** JSON Schema the arguments are validated against (ajv) before `run` */
  argumentsSchema: JsonObject;
  /** true when the tool needs a non-empty `allowedUrls` on its node */
  requiresAllowedUrls: boolean;
  /**
   * Runs the tool. Throw a ToolError to choose the failure class; any other error is
   * reported as NodeFailed. Must honour `ctx.signal`.
   */
  run(args: JsonObject, ctx: ToolContext): Promise<Json> | Json;
}

/** A `GET /v1/tools` entry. */
export interface ToolCatalogEntry {
  name: string;
  description: string;
  argumentsSchema: JsonObject;
  requiresAllowedUrls: boolean;
}
