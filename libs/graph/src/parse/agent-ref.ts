/**
 * An Agent node's reference to a saved agent (`/v1/agents`): `config.agentDefinitionId` and
 * optionally `agentVersion`. Which agents exist is the caller's
 * knowledge, handed in as a {@link SavedAgentCatalog}; this module only reads the names.
 */
import type { JsonObject } from '../model';
import { isObject, q } from './util';

/** The tenant's saved agents a graph names: id (lower case) → its latest version. */
export type SavedAgentCatalog = ReadonlyMap<string, number>;

/** A node's reference to a saved agent: its id and the version it asks for (null: latest at run start). */
export interface AgentReference {
  id: string;
  version: number | null;
}

/** The saved agent an Agent node's config names, or null. */
export function agentReferenceOf(kind: unknown, config: unknown): AgentReference | null {
  if (kind !== 'Agent' || !isObject(config) || typeof config.agentDefinitionId !== 'string') return null;
  const v = config.agentVersion;
  return { id: config.agentDefinitionId, version: typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null };
}

/** The saved agent ids a graph document names, each once, as written (one lookup before parsing). */
export function agentReferences(doc: unknown): string[] {
  const nodes = isObject(doc) && Array.isArray(doc.nodes) ? doc.nodes : [];
  const ids = new Set<string>();
  for (const n of nodes) {
    if (!isObject(n)) continue;
    const ref = agentReferenceOf(n.kind, n.config);
    if (ref !== null) ids.add(ref.id);
  }
  return [...ids];
}

/** An Agent node without a saved agent must carry its own instructions. */
export const AGENT_TASK_MISSING = 'an Agent needs config.instructions, or a saved agent (config.agentDefinitionId) that has them';

/**
 * The Agent rules on saved-agent members: instructions from the node or a saved agent, and
 * the reference judged against `agents`. `warnings` gets an `agentVersion` that has no
 * `agentDefinitionId` to apply to.
 */
export function agentReferenceErrors(config: JsonObject, agents: SavedAgentCatalog | undefined, warnings: string[]): string[] {
  const ref = agentReferenceOf('Agent', config);
  if (ref === null) {
    if (config.agentVersion !== undefined) warnings.push('config.agentVersion applies only with config.agentDefinitionId; it is ignored');
    return config.instructions === undefined ? [AGENT_TASK_MISSING] : [];
  }
  if (agents === undefined) return [];
  const latest = agents.get(ref.id.toLowerCase());
  if (latest === undefined) return [`unknown saved agent ${q(ref.id)} (not found in this tenant)`];
  if (ref.version !== null && ref.version > latest) return [`saved agent ${q(ref.id)} has no version ${ref.version} (latest ${latest})`];
  return [];
}

