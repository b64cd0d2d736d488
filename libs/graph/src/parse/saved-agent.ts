/**
 * Saved agents (`/v1/agents`): a tenant's reusable Agent settings, versioned. The node's own
 * members override the saved agent's ({@link mergeSavedAgent}); the saved members are judged
 * with the same checks as an Agent node's ({@link parseSavedAgent}).
 */
import type { Issue, JsonObject } from '../model';
import { parseConfig } from './config';
import type { McpCatalog } from './mcp-ref';
import { kindRules } from './node';
import { AGENT_TASK_MISSING } from './agent-ref';
import type { ToolCatalog } from './types';
import { hasOwn } from './util';

/** The members a saved agent holds: the Agent node members it may stand in for. */
export const SAVED_AGENT_MEMBERS = ['instructions', 'model', 'tools', 'toolApprovals', 'responseJsonSchema', 'reasoningEffort', 'maxIterations'] as const;

/** What a saved agent's members are judged against: the tool catalog and the tenant's MCP servers. */
export interface SavedAgentContext {
  tools: ToolCatalog;
  mcp?: McpCatalog;
}

/**
 * Judges a saved agent's members with the Agent node's checks (types, ranges, a compiling
 * `responseJsonSchema`, tools of the catalog or `mcp:` tools of the tenant's servers,
 * `toolApprovals`). `instructions` is required here: a saved agent is the task.
 * @returns the cleaned members (nulls dropped) and the problems, keyed to the member
 */
export function parseSavedAgent(raw: Readonly<Record<string, unknown>>, ctx: SavedAgentContext): { members: JsonObject; errors: Issue[] } {
  const picked: Record<string, unknown> = {};
  for (const m of SAVED_AGENT_MEMBERS) if (hasOwn(raw, m)) picked[m] = raw[m];
  const parsed = parseConfig('Agent', picked);
  const messages = [...parsed.errors];
  const warnings: string[] = [];
  kindRules('Agent', parsed.config, { kind: 'Standard', acceptsAttachments: false, tools: ctx.tools, mcp: ctx.mcp }, messages, warnings);
  if (parsed.config.instructions === undefined && !messages.some((m) => m.startsWith('config.instructions'))) messages.push('config.instructions is required');
  const errors = messages
    .filter((m) => m !== AGENT_TASK_MISSING)
    .map((m) => ({ key: /config\.([A-Za-z]+)/.exec(m)?.[1] ?? null, message: m.replaceAll('config.', '') }));
  return { members: parsed.config, errors };
}

/** Node members that pick the saved agent rather than override it. */
const REFERENCE_MEMBERS: ReadonlySet<string> = new Set(['agentDefinitionId', 'agentVersion']);

/** A node's effective Agent config: the saved agent's members, overridden by each member the node sets. */
export function mergeSavedAgent(saved: Readonly<Record<string, unknown>>, node: JsonObject): JsonObject {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(saved)) if (v !== null && v !== undefined) out[k] = v;
  for (const [k, v] of Object.entries(node)) if (v !== null && v !== undefined && !REFERENCE_MEMBERS.has(k)) out[k] = v;
  return out as JsonObject;
}
