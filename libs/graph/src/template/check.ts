/**
 * Judging templates at validation, before any run: a syntax error, a root other than
 * `input`, `state`, `upstream` and `run`, a state key the graph's `state.schema` does not
 * declare, or an `upstream.<key>` naming no node. Never throws.
 */
import type { Json } from '../model';
import { hasTemplateSyntax, templateEngine, TEMPLATE_ROOTS } from './engine';
import { messageOf, type ValuePath } from './render';

/** What a template is judged against. */
export interface TemplateCheckContext {
  /** the keys `state.schema` declares; null when the graph declares no schema (any key goes) */
  stateKeys: ReadonlySet<string> | null;
  /** every node key of the graph (`upstream.<key>`) */
  nodeKeys: ReadonlySet<string>;
}

const ROOTS: ReadonlySet<string> = new Set(TEMPLATE_ROOTS);

/** The first problem of one template text, or null when it is sound (or holds no template). */
export function checkTemplateText(text: string, ctx: TemplateCheckContext): string | null {
  if (!hasTemplateSyntax(text)) return null;
  let variables: unknown[][];
  try {
    variables = templateEngine.globalVariableSegmentsSync(templateEngine.parse(text)) as unknown[][];
  } catch (err) {
    return `template syntax error: ${messageOf(err)}`;
  }
  for (const segments of variables) {
    const [root, member] = segments;
    if (typeof root !== 'string') continue;
    if (!ROOTS.has(root)) return `template refers to '${root}', which is not a template root (input, state, upstream, run)`;
    if (typeof member !== 'string') continue;
    if (root === 'state' && ctx.stateKeys !== null && !ctx.stateKeys.has(member)) {
      return `template refers to state.${member}, which state.schema does not declare`;
    }
    if (root === 'upstream' && !ctx.nodeKeys.has(member)) return `template refers to upstream.${member}, which names no node of the graph`;
  }
  return null;
}

/** The first problem among the strings of `value` (an object's or array's, member by member), with where it sits. */
export function checkTemplateValue(value: Json, ctx: TemplateCheckContext, path: (string | number)[] = []): { path: ValuePath; error: string } | null {
  if (typeof value === 'string') {
    const error = checkTemplateText(value, ctx);
    return error === null ? null : { path, error };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = checkTemplateValue(value[i]!, ctx, [...path, i]);
      if (r) return r;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const r = checkTemplateValue(v, ctx, [...path, k]);
      if (r) return r;
    }
  }
  return null;
}

/**
 * The state keys a graph's `state` member declares, read tolerantly from the raw document:
 * the member names of `state.schema.properties` when it is a JSON Schema object, else the
 * member names of `state.schema` itself when it is a map of key → schema; null when there is
 * no schema (then any state key may be read).
 */
export function declaredStateKeys(rawState: unknown): ReadonlySet<string> | null {
  if (!isRecord(rawState)) return null;
  const schema = rawState['schema'];
  if (!isRecord(schema)) return null;
  const props = schema['properties'];
  if (isRecord(props)) return new Set(Object.keys(props));
  if ('type' in schema || '$schema' in schema || 'additionalProperties' in schema) return null;
  return new Set(Object.keys(schema));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
