/** One edge document → GraphEdge (CONTRACT §1.2). */
import type { GraphEdge, GraphNode } from '../model';
import { EDGE_MEMBER_SPECS } from '../spec/document';
import { parseCondition } from './condition';
import { hasOwn, q, typeName } from './util';

/** Edge members of the contract (anything else is refused; a stored document re-parsed ignores it with a warning). */
export const EDGE_MEMBERS: ReadonlySet<string> = new Set(EDGE_MEMBER_SPECS.map((m) => m.name));

export interface EdgeParse {
  /** null when `from`/`to` do not name declared nodes */
  edge: GraphEdge | null;
  /** the document carries a condition (even one that failed to parse) */
  conditional: boolean;
  errors: string[];
  warnings: string[];
  /** members of the edge document the contract does not know (the caller judges them) */
  unknownMembers: string[];
}

/**
 * Parse an edge. `nodes` holds the parsed nodes, `declared` every declared key; a condition
 * without a path inherits the `config.path` of a Condition source (`brokenPaths`: Condition
 * nodes whose own path is invalid and already reported).
 */
export function parseEdge(
  raw: Record<string, unknown>,
  key: string,
  nodes: ReadonlyMap<string, GraphNode>,
  declared: ReadonlySet<string>,
  brokenPaths: ReadonlySet<string>,
): EdgeParse {
  const errors: string[] = [];
  const warnings: string[] = [];
  const unknownMembers = Object.keys(raw).filter((k) => !EDGE_MEMBERS.has(k));
  const ends: Record<'from' | 'to', string | null> = { from: null, to: null };
  for (const m of ['from', 'to'] as const) {
    const v = hasOwn(raw, m) ? raw[m] : undefined;
    if (typeof v !== 'string') errors.push(`edge.${m} must be a node key, not ${typeName(v)}`);
    else if (!declared.has(v)) errors.push(`edge.${m} references undeclared node ${q(v)}`);
    else ends[m] = v;
  }
  let label: string | null = null;
  const rawLabel = hasOwn(raw, 'label') ? raw.label : null;
  if (rawLabel !== null && rawLabel !== undefined) {
    if (typeof rawLabel === 'string') label = rawLabel;
    else errors.push(`label must be a string, not ${typeName(rawLabel)}`);
  }
  let isDefault = false;
  const rawDefault = hasOwn(raw, 'default') ? raw.default : null;
  if (rawDefault !== null && rawDefault !== undefined) {
    if (typeof rawDefault === 'boolean') isDefault = rawDefault;
    else errors.push(`default must be a boolean, not ${typeName(rawDefault)}`);
  }
  const rawCondition = hasOwn(raw, 'condition') ? raw.condition : null;
  const conditional = rawCondition !== null && rawCondition !== undefined;
  let condition: GraphEdge['condition'] = null;
  if (conditional) {
    if (isDefault) errors.push('a default edge carries no condition');
    const source = ends.from === null ? undefined : nodes.get(ends.from);
    const inherited =
      source?.kind !== 'Condition' ? undefined : typeof source.config.path === 'string' ? source.config.path : brokenPaths.has(source.key) ? null : undefined;
    const c = parseCondition(rawCondition, inherited);
    if (c.ok) condition = c.condition;
    else errors.push(...c.errors);
  }
  const edge = ends.from !== null && ends.to !== null ? { key, from: ends.from, to: ends.to, label, condition, default: isDefault } : null;
  return { edge, conditional, errors, warnings, unknownMembers };
}
