/**
 * An Agent's `toolApprovals`: the tool calls a person approves before they run. Each entry
 * names a tool of the Agent's `tools` — alone (every call of it) or as `{ tool, when }`, where
 * `when` is a condition in the graph's one condition language (`{ path, op, value? }`), read
 * over `{ tool, arguments }` (`arguments.amount` Gt 100). A tool offered through a wildcard
 * (`mcp:SERVER/*`) is named by its full name (`mcp:SERVER/TOOL`).
 */
import { evaluateConditionOn } from '../conditions';
import type { EdgeCondition, Json, JsonObject } from '../model';
import { parseCondition } from './condition';
import { isObject } from './util';

/** One parsed entry: the tool, and the condition that must hold for a call to need approval (null: every call). */
export interface ToolApprovalRule {
  tool: string;
  when: EdgeCondition | null;
}

/** Parses `toolApprovals`; errors name the entry (`config.toolApprovals[1].when: …`). */
export function parseToolApprovals(raw: unknown): { rules: ToolApprovalRule[]; errors: string[] } {
  const rules: ToolApprovalRule[] = [];
  const errors: string[] = [];
  if (raw === undefined || raw === null) return { rules, errors };
  if (!Array.isArray(raw)) return { rules, errors: ['config.toolApprovals must be a list of tool names or { tool, when } entries'] };
  raw.forEach((entry: unknown, i) => {
    const at = `config.toolApprovals[${i}]`;
    if (typeof entry === 'string') {
      if (entry.trim() === '') errors.push(`${at} must name a tool`);
      else rules.push({ tool: entry, when: null });
      return;
    }
    if (!isObject(entry)) return void errors.push(`${at} must be a tool name or { tool, when }`);
    const unknown = Object.keys(entry).filter((k) => k !== 'tool' && k !== 'when');
    if (unknown.length > 0) errors.push(`${at} has an unknown member '${unknown[0]}'`);
    const tool = entry['tool'];
    if (typeof tool !== 'string' || tool.trim() === '') return void errors.push(`${at}.tool must name a tool`);
    const rawWhen = entry['when'];
    if (rawWhen === undefined || rawWhen === null) return void rules.push({ tool, when: null });
    const c = parseCondition(rawWhen, undefined);
    if (!c.ok) return void errors.push(...c.errors.map((e) => `${at}.when: ${e}`));
    rules.push({ tool, when: c.condition });
  });
  return { rules, errors };
}

/**
 * Does a call of `tool` with `args` need a person's approval? True when an entry names the
 * tool and its condition (if any) holds over `{ tool, arguments }`.
 */
export function toolCallNeedsApproval(rules: readonly ToolApprovalRule[], tool: string, args: JsonObject): boolean {
  const doc: { tool: string; arguments: Json } = { tool, arguments: args };
  return rules.some((r) => r.tool === tool && (r.when === null || evaluateConditionOn(r.when, doc)));
}
