/**
 * The read-only tool registry shared by worker-tool and worker-llm's Agent loop:
 * built-ins, optional test tools, and deployment modules (TOOL_MODULES). Arguments are
 * validated (ajv) before a tool runs; every failure comes back as a ToolError with its
 * failure class, so callers map outcomes without matching on text.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { hasExactNumbers, parseJson, stringifyJson, toolIdempotencyKey, type Json, type JsonObject } from '@flowline/graph';
import { counterTool, echoTool, jsonExtractTool, testFailTool, waitTool } from './builtins/basic-tools';
import { createHttpFetchTool, type HttpFetchOptions } from './builtins/http-fetch';
import { createReadFileTool } from './builtins/read-file';
import { runInFaultScope } from './fault-scope';
import { importModuleSpec } from './module-spec';
import { ToolError, abortError, throwIfAborted, toolFailed, toolInvalid } from './tool-error';
import type { ToolCatalogEntry, ToolContext, ToolDefinition } from './tool-definition';

export interface ToolRegistryOptions {
  /** WF_TEST_TOOLS=1: register `test_fail` and `counter`. @default false */
  testTools?: boolean;
  /** TOOL_MODULES: paths (relative to the process cwd) or package names, each exporting `tools`. @default [] */
  modules?: readonly string[];
  /** TOOL_FILES_ROOT for `read_file`; null disables it at call time. @default null */
  filesRoot?: string | null;
  /** `http_fetch` network policy (HTTP_FETCH_ALLOW_PRIVATE etc.). */
  httpFetch?: HttpFetchOptions;
  /** `read_file` size cap in bytes. @default 1048576 */
  maxFileBytes?: number;
  /** extra definitions registered after the built-ins (in-process tests, embedders). */
  extraTools?: readonly ToolDefinition[];
}

/**
 * What an invocation passes besides the arguments; `filesRoot` comes from the registry and
 * `idempotencyKey` is derived from `runId`, `nodeKey` and `agentCall` (the transcript step
 * recording an Agent's tool call) so no caller spells it differently.
 */
export type InvokeContext = Omit<ToolContext, 'filesRoot' | 'idempotencyKey'> & { agentCall?: number };

export interface ToolRegistry {
  has(name: string): boolean;
  get(name: string): ToolDefinition | undefined;
  /** `GET /v1/tools` entries, sorted by name. */
  catalog(): ToolCatalogEntry[];
  /** What libs/graph's parser takes to check Tool nodes. */
  asParserCatalog(): ReadonlyMap<string, { requiresAllowedUrls: boolean }>;
  /**
   * Validates `args` and runs the tool.
   * @returns the tool's JSON result (normalised through JSON)
   * @throws ToolError — ValidationFailed (unknown tool, bad arguments), NodeFailed,
   *   or the class carried by the aborted signal (Timeout, Cancelled, Interrupted)
   */
  invoke(name: string, args: JsonObject, ctx: InvokeContext): Promise<Json>;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Thrown at startup for a bad tool module or definition (the process must not boot). */
export class ToolRegistryError extends Error {
  readonly code = 'ToolRegistryInvalid';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolRegistryError';
  }
}

function checkDefinition(tool: unknown, source: string): ToolDefinition {
  const t = tool as Partial<ToolDefinition> | null;
  if (t === null || typeof t !== 'object') throw new ToolRegistryError(`${source}: a tool is not an object`);
  if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) throw new ToolRegistryError(`${source}: invalid tool name`);
  if (typeof t.description !== 'string') throw new ToolRegistryError(`${source}: tool ${t.name} has no description`);
  if (t.argumentsSchema === null || typeof t.argumentsSchema !== 'object' || Array.isArray(t.argumentsSchema)) {
    throw new ToolRegistryError(`${source}: tool ${t.name} has no argumentsSchema object`);
  }
  if (typeof t.run !== 'function') throw new ToolRegistryError(`${source}: tool ${t.name} has no run function`);
  return { ...t, requiresAllowedUrls: t.requiresAllowedUrls === true } as ToolDefinition;
}

async function loadModule(spec: string): Promise<ToolDefinition[]> {
  const mod = await importModuleSpec<{ tools?: unknown }>(spec, (cause) => new ToolRegistryError(`TOOL_MODULES: cannot load ${spec}`, { cause }));
  if (!Array.isArray(mod.tools)) throw new ToolRegistryError(`TOOL_MODULES: ${spec} exports no tools array`);
  return mod.tools.map((tool) => checkDefinition(tool, spec));
}

/** A tool's result as a plain JSON value (numbers a double cannot hold stay exact). */
function toJson(value: unknown): Json {
  if (value === undefined) return null;
  try {
    return parseJson(stringifyJson(value)) as Json;
  } catch (cause) {
    throw toolFailed('the tool returned a value that is not JSON', cause);
  }
}

function describeError(name: string, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  const kind = error instanceof Error ? error.name : typeof error;
  return toolFailed(`tool ${name} failed (${kind})`, error);
}

/**
 * Builds the registry: built-ins, then test tools, then each module in order.
 * @throws ToolRegistryError on a duplicate name, a bad module or an invalid argumentsSchema
 */
export async function createToolRegistry(options: ToolRegistryOptions = {}): Promise<ToolRegistry> {
  const definitions: ToolDefinition[] = [
    echoTool,
    waitTool,
    jsonExtractTool,
    createHttpFetchTool(options.httpFetch),
    createReadFileTool(options.maxFileBytes),
  ];
  if (options.testTools === true) definitions.push(testFailTool, counterTool);
  for (const tool of options.extraTools ?? []) definitions.push(checkDefinition(tool, 'extraTools'));
  for (const spec of options.modules ?? []) definitions.push(...(await loadModule(spec)));

  const ajv = new Ajv({ allErrors: true, strict: false });
  const tools = new Map<string, { def: ToolDefinition; validate: ValidateFunction }>();
  for (const def of definitions) {
    if (tools.has(def.name)) throw new ToolRegistryError(`tool ${def.name} is registered twice`);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(def.argumentsSchema);
    } catch (cause) {
      throw new ToolRegistryError(`tool ${def.name} has an invalid argumentsSchema`, { cause });
    }
    tools.set(def.name, { def, validate });
  }
  const filesRoot = options.filesRoot ?? null;
  const sorted = [...tools.values()].map((t) => t.def).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  return {
    has: (name) => tools.has(name),
    get: (name) => tools.get(name)?.def,
    catalog: () =>
      sorted.map((def) => ({
        name: def.name,
        description: def.description,
        argumentsSchema: def.argumentsSchema,
        requiresAllowedUrls: def.requiresAllowedUrls,
      })),
    asParserCatalog: () => new Map(sorted.map((def) => [def.name, { requiresAllowedUrls: def.requiresAllowedUrls }])),
    async invoke(name, args, ctx) {
      const entry = tools.get(name);
      if (entry === undefined) throw toolInvalid(`unknown tool ${name}`);
      // schema keywords judge exact numbers by their nearest double; the tool gets them exact
      if (!entry.validate(hasExactNumbers(args) ? JSON.parse(stringifyJson(args)) : args)) {
        // ajv messages name the member and the rule, never the value.
        const details = (entry.validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
        throw toolInvalid(`tool ${name}: invalid arguments: ${details.join('; ')}`);
      }
      throwIfAborted(ctx.signal);
      try {
        // A result that arrived wins even if the signal fired meanwhile. An error the tool
        // leaks outside this call fails it ToolModuleFault (fault-scope.ts).
        const { agentCall, ...rest } = ctx;
        const toolCtx: ToolContext = { ...rest, filesRoot, idempotencyKey: toolIdempotencyKey(ctx.runId, ctx.nodeKey, agentCall) };
        return toJson(await runInFaultScope(name, ctx.invocationId, () => entry.def.run(args, toolCtx)));
      } catch (error) {
        if (ctx.signal.aborted) throw abortError(ctx.signal);
        throw describeError(name, error);
      }
    },
  };
}
