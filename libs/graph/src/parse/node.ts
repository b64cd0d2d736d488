/**
 * One node document → GraphNode with defaults filled in (CONTRACT §1.1), plus the
 * per-node rules that need only the node and the graph's kind/tool catalog.
 */
import { parseToolApprovals } from './tool-approvals';
import { waitConfigErrors } from '../wait/wait-config';
import { approvalConfigErrors } from '../approval/approval-config';
import { NODE_KINDS } from '../model';
import type { GraphKind, GraphNode, JoinPolicy, JsonObject, NodeKind, OnError, RetryBackoff } from '../model';
import { NODE_MEMBER_SPECS, RETRY_BACKOFF_MEMBER_SPECS } from '../spec/document';
import { NODE_KIND_SPECS } from '../spec/node-kinds';
import { hasTemplateSyntax } from '../template/engine';
import { parseConfig } from './config';
import { checkChildStateMembers, parseWrites } from '../state/parse-state';
import { parseHttpUrl, parseJoinPolicy, schemaObject } from './member-check';
import type { ToolCatalog } from './types';
import { isMcpToolName, mcpNameErrors, type McpCatalog } from './mcp-ref';
import { agentReferenceErrors, type SavedAgentCatalog } from './agent-ref';
import { hasOwn, isObject, isPositiveInt, q, typeName } from './util';

/** Node members of the contract (anything else is refused; a stored document re-parsed ignores it with a warning). */
export const NODE_MEMBERS: ReadonlySet<string> = new Set(NODE_MEMBER_SPECS.map((m) => m.name));

/** Kinds whose default `maxAttempts` is above 1 (3: LlmCall, Agent, Tool, DecisionModel). */
export const RETRYING_KINDS: ReadonlySet<NodeKind> = new Set(NODE_KINDS.filter((k) => NODE_KIND_SPECS[k].maxAttempts > 1));

/** `retryBackoff` when absent, and the value of each member left out. */
export const DEFAULT_RETRY_BACKOFF: Readonly<RetryBackoff> = Object.freeze(
  Object.fromEntries(RETRY_BACKOFF_MEMBER_SPECS.map((m) => [m.name, m.default as number])) as unknown as RetryBackoff,
);
const BACKOFF_MEMBERS: ReadonlySet<string> = new Set(RETRY_BACKOFF_MEMBER_SPECS.map((m) => m.name));

export interface GraphContext {
  kind: GraphKind;
  acceptsAttachments: boolean;
  tools: ToolCatalog;
  /** existing definition ids (lower case); absent = references not judged */
  definitions?: ReadonlySet<string> | undefined;
  /** the tenant's MCP servers (and their listings where known); absent = only the form of `mcp:` names is judged */
  mcp?: McpCatalog | undefined;
  /** the tenant's saved agents a graph names (id → latest version); absent = references not judged */
  agents?: SavedAgentCatalog | undefined;
}

export interface NodeParse {
  /** null when the node has no usable key or kind */
  node: GraphNode | null;
  errors: string[];
  warnings: string[];
  /** members of the node document the contract does not know (the caller judges them) */
  unknownMembers: string[];
}

function opt(o: Record<string, unknown>, k: string): unknown {
  return hasOwn(o, k) && o[k] !== null ? o[k] : undefined;
}

function parseBackoff(v: unknown): RetryBackoff | string {
  if (!isObject(v)) return `retryBackoff must be an object, not ${typeName(v)}`;
  const extra = Object.keys(v).filter((k) => !BACKOFF_MEMBERS.has(k));
  if (extra.length > 0) return `retryBackoff has an unknown member '${extra[0]}'`;
  const b: RetryBackoff = { ...DEFAULT_RETRY_BACKOFF };
  const init = opt(v, 'initialMs');
  const mult = opt(v, 'multiplier');
  const max = opt(v, 'maxMs');
  if (init !== undefined) {
    if (!Number.isSafeInteger(init) || (init as number) < 0) return 'retryBackoff.initialMs must be a non-negative integer';
    b.initialMs = init as number;
  }
  if (mult !== undefined) {
    if (typeof mult !== 'number' || !Number.isFinite(mult) || mult < 1) return 'retryBackoff.multiplier must be a number ≥ 1';
    b.multiplier = mult;
  }
  if (max !== undefined) {
    if (!Number.isSafeInteger(max) || (max as number) < 0) return 'retryBackoff.maxMs must be a non-negative integer';
    b.maxMs = max as number;
  }
  if (b.maxMs < b.initialMs) return 'retryBackoff.maxMs must be ≥ retryBackoff.initialMs';
  return b;
}

/** Parse one node; `key`/`kind` problems leave `node` null (the caller reports them). */
export function parseNode(raw: Record<string, unknown>, key: string, kind: NodeKind, ctx: GraphContext): NodeParse {
  const errors: string[] = [];
  const warnings: string[] = [];
  const unknownMembers = Object.keys(raw).filter((k) => !NODE_MEMBERS.has(k));
  let label = key;
  const rawLabel = opt(raw, 'label');
  if (rawLabel !== undefined) {
    if (typeof rawLabel === 'string') label = rawLabel;
    else errors.push(`label must be a string, not ${typeName(rawLabel)}`);
  }
  let joinPolicy: JoinPolicy = 'All';
  const rawJoin = opt(raw, 'joinPolicy');
  if (rawJoin !== undefined) {
    const j = parseJoinPolicy(rawJoin);
    if ('error' in j) errors.push(j.error);
    else joinPolicy = j.policy;
  }
  let maxAttempts = NODE_KIND_SPECS[kind].maxAttempts;
  const rawAttempts = opt(raw, 'maxAttempts');
  if (rawAttempts !== undefined) {
    if (isPositiveInt(rawAttempts)) maxAttempts = rawAttempts;
    else errors.push('maxAttempts must be a positive integer');
  }
  let timeoutSeconds: number | null = null;
  const rawTimeout = opt(raw, 'timeoutSeconds');
  if (rawTimeout !== undefined) {
    if (isPositiveInt(rawTimeout)) timeoutSeconds = rawTimeout;
    else errors.push('timeoutSeconds must be a positive integer');
  }
  let retryBackoff: RetryBackoff = { ...DEFAULT_RETRY_BACKOFF };
  const rawBackoff = opt(raw, 'retryBackoff');
  if (rawBackoff !== undefined) {
    const b = parseBackoff(rawBackoff);
    if (typeof b === 'string') errors.push(b);
    else retryBackoff = b;
  }
  let onError: OnError = 'FailRun';
  const rawOnError = opt(raw, 'onError');
  if (rawOnError !== undefined) {
    if (rawOnError === 'FailRun' || rawOnError === 'Continue') onError = rawOnError;
    else errors.push(`onError must be "FailRun" or "Continue", not ${JSON.stringify(rawOnError)}`);
  }
  const schemas: Record<'inputSchema' | 'outputSchema', JsonObject | null> = { inputSchema: null, outputSchema: null };
  for (const m of ['inputSchema', 'outputSchema'] as const) {
    const v = opt(raw, m);
    if (v === undefined) continue;
    const r = schemaObject(v);
    if ('error' in r) errors.push(`${m} ${r.error}`);
    else schemas[m] = r.value as JsonObject;
  }
  let position: GraphNode['position'] = null;
  const rawPos = opt(raw, 'position');
  if (rawPos !== undefined) {
    if (isObject(rawPos) && typeof rawPos.x === 'number' && typeof rawPos.y === 'number') position = { x: rawPos.x, y: rawPos.y };
    else errors.push('position must be { x, y } with numeric members');
  }
  const c = parseConfig(kind, hasOwn(raw, 'config') ? raw.config : undefined);
  errors.push(...c.errors);
  kindRules(kind, c.config, ctx, errors, warnings);
  const writes = parseWrites(opt(raw, 'writes'), errors);
  if (kind === 'Map' && c.config.toleratedFailures !== undefined && c.config.toleratedFailurePercent !== undefined) errors.push('config.toleratedFailures and config.toleratedFailurePercent cannot be given together; give one');
  if ((kind === 'Map' || kind === 'Subworkflow') && c.config.version !== undefined && c.config.alias !== undefined) errors.push('config.version and config.alias cannot be given together; give one');
  if (kind === 'Wait') errors.push(...waitConfigErrors(c.config));
  if (kind === 'Pause') errors.push(...approvalConfigErrors(c.config));
  if (kind === 'Subworkflow') checkChildStateMembers({ kind, config: c.config, ...(writes ? { writes } : {}) }, errors);
  return {
    node: {
      key, kind, label, joinPolicy, maxAttempts, timeoutSeconds, retryBackoff, onError, ...schemas, position, config: c.config,
      ...(writes ? { writes } : {}),
    },
    errors,
    warnings,
    unknownMembers,
  };
}

/** Rules that need the graph kind or the tool catalog (saved agents judge their members with them too). */
export function kindRules(kind: NodeKind, config: JsonObject, ctx: GraphContext, errors: string[], warnings: string[]): void {
  if (config.publishToChat === true && ctx.kind !== 'Chat') errors.push('publishToChat: true is refused outside a Chat graph');
  if (config.includeAttachments === true && !ctx.acceptsAttachments) {
    errors.push('includeAttachments: true needs a Chat graph with chat.acceptsAttachments on');
  }
  if (kind === 'Tool' && typeof config.toolName === 'string' && isMcpToolName(config.toolName)) {
    errors.push(...mcpNameErrors('Tool', config.toolName, ctx.mcp));
    if (config.allowedUrls !== undefined) errors.push('config.allowedUrls applies only to tools that require it; an MCP tool does not');
  } else if (kind === 'Tool' && typeof config.toolName === 'string') {
    const tool = ctx.tools.get(config.toolName);
    if (tool === undefined) {
      errors.push(`unknown tool ${q(config.toolName)}; a Tool node may name only ${listTools(ctx.tools)}`);
    } else if (tool.requiresAllowedUrls) {
      const urls = Array.isArray(config.allowedUrls) ? (config.allowedUrls as string[]) : [];
      const reported = errors.some((e) => e.startsWith('config.allowedUrls'));
      if (urls.length === 0 && !reported) errors.push(`tool ${q(config.toolName)} requires a non-empty config.allowedUrls of absolute http(s) URL prefixes`);
      else if (urls.length > 0) checkLiteralUrl(config, urls, errors);
    } else if (config.allowedUrls !== undefined) {
      errors.push(`config.allowedUrls applies only to tools that require it; ${q(config.toolName)} does not`);
    }
  }
  const reference = definitionReferenceOf(kind, config);
  if (ctx.definitions !== undefined && reference !== null && !ctx.definitions.has(reference.toLowerCase())) {
    errors.push(`unknown definition ${q(reference)} (not found in this tenant)`);
  }
  if (kind === 'Agent') {
    errors.push(...agentReferenceErrors(config, ctx.agents, warnings));
  }
  if (kind === 'Agent' && Array.isArray(config.tools)) {
    const seen = new Set<string>();
    for (const t of config.tools as string[]) {
      if (seen.has(t)) errors.push(`config.tools lists ${q(t)} twice`);
      seen.add(t);
      if (isMcpToolName(t)) {
        errors.push(...mcpNameErrors('Agent', t, ctx.mcp).map((e) => `config.tools: ${e}`));
        continue;
      }
      const tool = ctx.tools.get(t);
      if (tool === undefined) errors.push(`unknown tool ${q(t)} in config.tools; an Agent may offer only ${listTools(ctx.tools)}`);
      else if (tool.requiresAllowedUrls) warnings.push(`tool ${q(t)} needs an allowedUrls list an Agent cannot carry; it is not offered to the model`);
    }
  }
  if (kind === 'Agent') agentApprovalRules(config, errors, warnings);
}

/**
 * `toolApprovals`: well-formed entries (errors); an entry naming a tool the Agent does not
 * offer (directly or through `mcp:SERVER/*`) never applies (a warning).
 */
function agentApprovalRules(config: JsonObject, errors: string[], warnings: string[]): void {
  const { rules, errors: found } = parseToolApprovals(config.toolApprovals);
  errors.push(...found);
  const offered = Array.isArray(config.tools) ? (config.tools as unknown[]).filter((t): t is string => typeof t === 'string') : [];
  const covers = (t: string, name: string) => t === name || (t.endsWith('/*') && name.startsWith(t.slice(0, -1)) && name.length > t.length - 1);
  for (const r of rules) {
    if (!offered.some((t) => covers(t, r.tool))) warnings.push(`config.toolApprovals names ${q(r.tool)}, which config.tools does not offer: it never applies`);
  }
}

/** The definition a Subworkflow or Map (`config.definitionId`) or Loop (`config.body`) names, or null. */
export function definitionReferenceOf(kind: unknown, config: unknown): string | null {
  if (!isObject(config)) return null;
  const ref = kind === 'Subworkflow' || kind === 'Map' ? config.definitionId : kind === 'Loop' ? config.body : undefined;
  return typeof ref === 'string' ? ref : null;
}

/** The catalog's tools, for a message that names what may be used instead. */
export function listTools(tools: ToolCatalog): string {
  const names = [...tools.keys()].sort();
  return names.length === 0 ? 'catalog tools (the catalog is empty)' : names.map(q).join(', ');
}

/** A literal `arguments.url` (not overridden by a binding, not a template) must sit under an allowed prefix. */
function checkLiteralUrl(config: JsonObject, allowed: string[], errors: string[]): void {
  const args = config.arguments;
  const bound = isObject(config.argumentBindings) && hasOwn(config.argumentBindings, 'url');
  if (!isObject(args) || !hasOwn(args, 'url') || bound) return;
  // a templated url is known only when it is rendered; the tool checks it against allowedUrls then
  if (typeof args.url === 'string' && hasTemplateSyntax(args.url)) return;
  const url = parseHttpUrl(args.url);
  if (url === null) {
    errors.push('config.arguments.url must be an absolute http(s) URL');
    return;
  }
  if (!allowed.some((p) => urlUnderPrefix(url, parseHttpUrl(p)))) {
    errors.push(`config.arguments.url ${JSON.stringify(args.url)} is outside config.allowedUrls`);
  }
}

/** Same scheme, host and port; path prefix on a segment boundary. */
export function urlUnderPrefix(url: URL, prefix: URL | null): boolean {
  if (prefix === null) return false;
  if (url.protocol !== prefix.protocol || url.hostname !== prefix.hostname || url.port !== prefix.port) return false;
  const p = prefix.pathname;
  if (p === '/' || url.pathname === p) return true;
  const base = p.endsWith('/') ? p : `${p}/`;
  return url.pathname.startsWith(base);
}

/** Is `v` a node kind (case-sensitive)? */
export function isNodeKind(v: unknown): v is NodeKind {
  return typeof v === 'string' && (NODE_KINDS as readonly string[]).includes(v);
}
