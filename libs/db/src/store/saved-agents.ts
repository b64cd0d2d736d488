/**
 * A tenant's saved agents (schema/saved-agents.ts) and their versions. Every write of an
 * agent adds a version (its members sealed at rest); versions are never rewritten, so a run
 * that pinned one at its start ({@link pinSavedAgents}, `runs.agent_pins`) reads the same
 * members for its whole life ({@link savedAgentForNode}). Every read is by tenant: another
 * tenant's agent reads as absent.
 */
import { randomUUID } from 'node:crypto';
import { openJsonText, sealJson, type Sealed } from '../crypto';
import { exactJson, type KeysetPage } from './definitions';
import { decodeVersionCursor, encodeVersionCursor } from './definition-versions';
import type { Queryable } from './transaction';

/** What a client sends to create or replace an agent: its name and its members (already judged). */
export interface SavedAgentInput {
  name: string;
  members: Record<string, unknown>;
}

/** An agent at one version (the latest, unless asked otherwise). */
export interface SavedAgentRecord {
  id: string;
  name: string;
  /** the version these members are */
  version: number;
  /** the agent's latest version */
  latestVersion: number;
  members: Record<string, unknown>;
  createdAt: string;
  /** when this version was saved */
  updatedAt: string;
}

/** One version of an agent in a listing, without its members. */
export interface SavedAgentVersionSummary {
  version: number;
  name: string;
  createdAt: string;
}

/** Another agent of the tenant already has the name. */
export class SavedAgentNameTakenError extends Error {
  override readonly name = 'SavedAgentNameTakenError';
  constructor(readonly agentName: string) {
    super(`an agent named ${agentName} already exists`);
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** true when `id` can name an agent (anything else reads as absent without reaching SQL). */
export const isSavedAgentId = (id: string): boolean => UUID_RE.test(id);

const membersAt = (id: string, version: number): Sealed => ({ table: 'saved_agent_versions', column: 'members', row: `${id}/${version}` });

interface Row {
  id: string;
  name: string;
  version: number;
  latest_version: number;
  members: string;
  created_at: Date;
  updated_at: Date;
}

function toRecord(r: Row): SavedAgentRecord {
  return {
    id: r.id,
    name: r.name,
    version: r.version,
    latestVersion: r.latest_version,
    members: exactJson(openJsonText(r.members, membersAt(r.id, r.version))) as Record<string, unknown>,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** `saved_agents_tenant_name_idx` refused the write. */
function nameTaken(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && e.constraint === 'saved_agents_tenant_name_idx';
}

const sealed = (id: string, version: number, members: Record<string, unknown>) => JSON.stringify(sealJson(members, membersAt(id, version)));

const SELECT_AT = `SELECT a.id, v.name, v.version, a.version AS latest_version, v.members::text AS members, a.created_at, v.created_at AS updated_at
  FROM saved_agents a JOIN saved_agent_versions v ON v.agent_id = a.id`;

/**
 * Inserts an agent of `tenant` at version 1 (the agent row and its first version in one statement).
 * @throws SavedAgentNameTakenError when the tenant has an agent of that name
 */
export async function createSavedAgent(db: Queryable, tenant: string, input: SavedAgentInput): Promise<SavedAgentRecord> {
  const id = randomUUID();
  try {
    await db.query(
      `WITH a AS (INSERT INTO saved_agents (id, tenant_id, name) VALUES ($1, $2, $3) RETURNING id)
       INSERT INTO saved_agent_versions (agent_id, tenant_id, version, name, members) SELECT id, $2, 1, $3, $4::jsonb FROM a`,
      [id, tenant, input.name, sealed(id, 1, input.members)],
    );
  } catch (err) {
    if (nameTaken(err)) throw new SavedAgentNameTakenError(input.name);
    throw err;
  }
  const row = await getSavedAgent(db, tenant, id);
  if (row === null) throw new Error('a saved agent vanished right after its insert');
  return row;
}

/**
 * An agent of the tenant at `version` (absent: its latest); null when the agent or that
 * version does not exist.
 */
export async function getSavedAgent(db: Queryable, tenant: string, id: string, version?: number): Promise<SavedAgentRecord | null> {
  if (!isSavedAgentId(id)) return null;
  const { rows } = await db.query<Row>(`${SELECT_AT} WHERE a.tenant_id = $1 AND a.id = $2 AND v.version = coalesce($3::int, a.version)`, [
    tenant,
    id.toLowerCase(),
    version ?? null,
  ]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Saves a new version of an agent: a compare-and-set on the version read (a concurrent
 * update makes zero rows, and the write is tried again on the version it left).
 * @returns the agent at its new version; null when the tenant has no such agent
 * @throws SavedAgentNameTakenError when the new name is another agent's
 */
export async function updateSavedAgent(db: Queryable, tenant: string, id: string, input: SavedAgentInput): Promise<SavedAgentRecord | null> {
  for (;;) {
    const current = await getSavedAgent(db, tenant, id);
    if (current === null) return null;
    const next = current.latestVersion + 1;
    try {
      const res = await db.query(
        `WITH a AS (UPDATE saved_agents SET name = $3, version = $4, updated_at = now()
                    WHERE tenant_id = $1 AND id = $2 AND version = $4 - 1 RETURNING id)
         INSERT INTO saved_agent_versions (agent_id, tenant_id, version, name, members) SELECT id, $1, $4, $3, $5::jsonb FROM a`,
        [tenant, current.id, input.name, next, sealed(current.id, next, input.members)],
      );
      if ((res.rowCount ?? 0) > 0) return getSavedAgent(db, tenant, current.id, next);
    } catch (err) {
      if (nameTaken(err)) throw new SavedAgentNameTakenError(input.name);
      throw err;
    }
  }
}

/** Deletes an agent and its versions; false when the tenant has no such agent. */
export async function deleteSavedAgent(db: Queryable, tenant: string, id: string): Promise<boolean> {
  if (!isSavedAgentId(id)) return false;
  const { rowCount } = await db.query('DELETE FROM saved_agents WHERE tenant_id = $1 AND id = $2', [tenant, id.toLowerCase()]);
  return (rowCount ?? 0) > 0;
}

/** The cursor after a page of agents ending at `name` (agents page by name). */
export function encodeAgentCursor(name: string): string {
  return Buffer.from(`a${name}`, 'utf8').toString('base64url');
}

/** Decodes a cursor made by {@link encodeAgentCursor}; null when malformed. */
export function decodeAgentCursor(cursor: string): string | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith('a') && text.length > 1 && !text.includes('\u0000') && !text.includes('\uFFFD') ? text.slice(1) : null;
}

/** A page of the tenant's agents at their latest version, by name; `after` is a decoded cursor. */
export async function listSavedAgents(db: Queryable, tenant: string, limit: number, after: string | null): Promise<KeysetPage<SavedAgentRecord>> {
  const { rows } = await db.query<Row>(
    `${SELECT_AT} AND v.version = a.version WHERE a.tenant_id = $1 AND ($2::text IS NULL OR a.name > $2) ORDER BY a.name LIMIT $3`,
    [tenant, after, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page.map(toRecord), nextCursor: rows.length > limit && last ? encodeAgentCursor(last.name) : null };
}

/** A page of an agent's versions, newest first, without members (cursors as definition versions'); null when absent. */
export async function listSavedAgentVersions(
  db: Queryable,
  tenant: string,
  id: string,
  limit: number,
  before: number | null,
): Promise<KeysetPage<SavedAgentVersionSummary> | null> {
  if ((await getSavedAgent(db, tenant, id)) === null) return null;
  const { rows } = await db.query<{ version: number; name: string; created_at: Date }>(
    `SELECT version, name, created_at FROM saved_agent_versions
     WHERE agent_id = $1 AND tenant_id = $2 AND ($3::int IS NULL OR version < $3) ORDER BY version DESC LIMIT $4`,
    [id.toLowerCase(), tenant, before, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({ version: r.version, name: r.name, createdAt: r.created_at.toISOString() })),
    nextCursor: rows.length > limit && last ? encodeVersionCursor(last.version) : null,
  };
}

export { decodeVersionCursor as decodeAgentVersionCursor };

/** The tenant's agents among `ids` with their latest version (one query; graph validation). */
export async function savedAgentCatalog(db: Queryable, tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
  const wellFormed = ids.filter(isSavedAgentId).map((i) => i.toLowerCase());
  if (wellFormed.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; version: number }>('SELECT id, version FROM saved_agents WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [
    tenant,
    wellFormed,
  ]);
  return new Map(rows.map((r) => [r.id, r.version]));
}

/** One Agent node's saved agent as a run pins it: node key, agent id and the version asked for (null: the latest). */
export interface AgentPinRequest {
  nodeKey: string;
  id: string;
  version: number | null;
}

/** A run's pins: node key → the agent and version its Agent node uses. */
export type AgentPins = Record<string, { id: string; version: number }>;

/**
 * Resolves a run's saved agents to versions, for run creation (inside its transaction,
 * key-share locking the agents so a concurrent delete waits for the run to commit).
 * @returns the pins, or the node keys whose agent or version no longer exists
 */
export async function pinSavedAgents(db: Queryable, tenant: string, refs: readonly AgentPinRequest[]): Promise<{ pins: AgentPins; missing: AgentPinRequest[] }> {
  const pins: AgentPins = {};
  if (refs.length === 0) return { pins, missing: [] };
  const ids = [...new Set(refs.map((r) => r.id.toLowerCase()).filter(isSavedAgentId))];
  const { rows } = await db.query<{ id: string; version: number; versions: number[] }>(
    `SELECT a.id, a.version, (SELECT array_agg(v.version) FROM saved_agent_versions v WHERE v.agent_id = a.id) AS versions
     FROM saved_agents a WHERE a.tenant_id = $1 AND a.id = ANY($2::uuid[]) FOR KEY SHARE OF a`,
    [tenant, ids],
  );
  const found = new Map(rows.map((r) => [r.id, r]));
  const missing: AgentPinRequest[] = [];
  for (const ref of refs) {
    const agent = found.get(ref.id.toLowerCase());
    const version = ref.version ?? agent?.version;
    if (agent === undefined || version === undefined || !agent.versions.includes(version)) missing.push(ref);
    else pins[ref.nodeKey] = { id: agent.id, version };
  }
  return { pins, missing };
}

/** The saved agent an Agent node of a run uses: its pinned version's members. */
export interface PinnedSavedAgent {
  id: string;
  version: number;
  name: string;
  members: Record<string, unknown>;
}

/**
 * The saved agent a run's node pinned at the run's start, for the LLM worker. A run whose
 * row holds no pin for the node (a child run, created by the dispatcher) pins it now, once,
 * by a compare-and-set on the missing key, so every attempt of the node reads one version.
 * @returns null when the run, the agent or the pinned version no longer exists
 */
export async function savedAgentForNode(db: Queryable, runId: string, nodeKey: string, ref: { id: string; version: number | null }): Promise<PinnedSavedAgent | null> {
  if (!isSavedAgentId(ref.id)) return null;
  // pins the node when the run holds no pin for it yet (a no-op otherwise), then reads the pin
  const { rows } = await db.query<{ id: string; version: number; name: string; members: string }>(
    `WITH pin AS (
       UPDATE runs r SET agent_pins = r.agent_pins || jsonb_build_object($2::text, jsonb_build_object('id', a.id, 'version', coalesce($4::int, a.version)))
       FROM saved_agents a
       WHERE r.id = $1 AND NOT (r.agent_pins ? $2) AND a.id = $3::uuid AND a.tenant_id = r.tenant_id
       RETURNING r.agent_pins -> $2 AS p),
     cur AS (SELECT coalesce((SELECT p FROM pin), (SELECT agent_pins -> $2 FROM runs WHERE id = $1)) AS p)
     SELECT v.agent_id AS id, v.version, v.name, v.members::text AS members
     FROM cur JOIN runs r ON r.id = $1
     JOIN saved_agent_versions v ON v.agent_id = (cur.p ->> 'id')::uuid AND v.version = (cur.p ->> 'version')::int AND v.tenant_id = r.tenant_id`,
    [runId, nodeKey, ref.id.toLowerCase(), ref.version],
  );
  const row = rows[0];
  if (!row) return null;
  return { id: row.id, version: row.version, name: row.name, members: exactJson(openJsonText(row.members, membersAt(row.id, row.version))) as Record<string, unknown> };
}
