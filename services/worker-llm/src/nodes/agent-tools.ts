/**
 * The tools an Agent offers its model: catalog tools by name (one that needs allowedUrls is
 * not offered: an Agent carries none) and MCP tools — `mcp:<server>/<tool>` or every tool a
 * server lists with `mcp:<server>/*`, read from the server when the attempt starts. An MCP
 * tool is offered under a provider-safe function name (`mcp__<server>__<tool>`) and mapped
 * back when the model calls it; it is called for the run's tenant.
 */
import { isMcpToolName, stringifyJson, type Json, type JsonObject } from '@flowline/graph';
import { mcpFunctionName, mcpProgressText, toolInvalid } from '@flowline/tools';
import type { LlmToolSpec } from '../providers/types';
import type { NodeContext } from './context';

/** What a function name the model may call stands for. */
export type OfferedTool = { kind: 'catalog'; name: string } | { kind: 'mcp'; ref: string };

export interface AgentTools {
  /** the specs sent to the model, by function name */
  specs: ReadonlyMap<string, LlmToolSpec>;
  /** the tool behind a function name; undefined when not offered */
  target(functionName: string): OfferedTool | undefined;
  /** how a tool call is recorded and shown: the catalog name or the `mcp:` ref */
  label(functionName: string): string;
  /** calls an MCP tool with the call's idempotency key; the result as the model is shown it (structured content as JSON, else the text) */
  callMcp(ref: string, args: JsonObject, idempotencyKey: string): Promise<string>;
}

/** A unique function name: `base`, else `base_2`, `base_3`… within 64 characters. */
function unique(base: string, taken: ReadonlyMap<string, unknown>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, 64 - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

/**
 * Reads the offer of an Agent's `tools`.
 * @throws ToolError when an MCP server cannot be read (unreachable: NodeFailed, retried) or is
 * not the tenant's (ValidationFailed)
 */
export async function agentTools(ctx: NodeContext, names: readonly string[]): Promise<AgentTools> {
  const specs = new Map<string, LlmToolSpec>();
  const targets = new Map<string, OfferedTool>();
  let tenant: string | null = null;
  const mcp = () => {
    if (ctx.mcp === undefined) throw toolInvalid('this LLM worker has no MCP toolbox');
    return ctx.mcp;
  };
  const tenantOf = async (): Promise<string> => {
    tenant ??= await mcp().tenantOf(ctx.item.runId);
    if (tenant === null) throw toolInvalid('the run of this node is gone');
    return tenant;
  };
  for (const name of names) {
    if (!isMcpToolName(name)) {
      const def = ctx.tools.get(name);
      if (def && !def.requiresAllowedUrls) {
        specs.set(name, { name, description: def.description, parameters: def.argumentsSchema });
        targets.set(name, { kind: 'catalog', name });
      }
      continue;
    }
    const listed = await mcp().toolbox.expand(await tenantOf(), name, ctx.signal);
    for (const tool of listed) {
      if ([...targets.values()].some((t) => t.kind === 'mcp' && t.ref === tool.ref)) continue;
      const fn = unique(mcpFunctionName(tool.server, tool.name), specs);
      specs.set(fn, { name: fn, description: tool.description, parameters: tool.inputSchema });
      targets.set(fn, { kind: 'mcp', ref: tool.ref });
    }
  }
  return {
    specs,
    target: (fn) => targets.get(fn),
    label: (fn) => {
      const t = targets.get(fn);
      return t === undefined ? fn.slice(0, 64) : t.kind === 'mcp' ? t.ref : t.name;
    },
    async callMcp(ref, args, idempotencyKey) {
      const result = (await mcp().toolbox.call(await tenantOf(), ref, args, {
        signal: ctx.signal,
        idempotencyKey,
        onProgress: (p) => ctx.phase(`${ref} ${mcpProgressText(p)}`),
        logger: ctx.logger,
      })) as { text?: Json; structured?: Json };
      return result.structured !== null && result.structured !== undefined ? stringifyJson(result.structured) : String(result.text ?? '');
    },
  };
}
