/**
 * A tenant's MCP servers (schema/mcp-servers.ts). Every read and write is by tenant; another
 * tenant's server reads as absent. The public reads never return header values (only their
 * names); {@link mcpServerForUse} opens them, for the workers that connect.
 */
import { randomUUID } from 'node:crypto';
import { MCP_SERVER_NAME_PATTERN } from '@flowline/graph';
import { openJson, sealJson, type Sealed } from '../crypto';
import type { Queryable } from './transaction';

/** What a client sends to create or replace a server. */
export interface McpServerInput {
  name: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  /** replaces the stored headers; undefined on an update keeps them */
  headers?: Readonly<Record<string, string>>;
  allowedTools: readonly string[] | null;
  timeoutMs: number;
}

/** A server as the API shows it: header names, never values. */
export interface McpServerRecord {
  id: string;
  name: string;
  url: string;
  transport: 'streamable-http' | 'sse';
  headerNames: string[];
  allowedTools: string[] | null;
  timeoutMs: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** A server as a worker connects to it: its headers opened. */
export interface McpServerForUse extends McpServerRecord {
  headers: Record<string, string>;
}

/** Another server of the tenant already has the name. */
export class McpServerNameTakenError extends Error {
  override readonly name = 'McpServerNameTakenError';
  constructor(readonly serverName: string) {
    super(`an MCP server named ${serverName} already exists`);
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COLUMNS = 'id, name, url, transport, header_names, allowed_tools, timeout_ms, version, created_at, updated_at';

interface Row {
  id: string;
  name: string;
  url: string;
  transport: string;
  header_names: string[];
  allowed_tools: string[] | null;
  timeout_ms: number;
  version: number;
  created_at: Date;
  updated_at: Date;
  headers?: unknown;
}

const sealedAt = (id: string): Sealed => ({ table: 'mcp_servers', column: 'headers', row: id });

function toRecord(r: Row): McpServerRecord {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    transport: r.transport === 'sse' ? 'sse' : 'streamable-http',
    headerNames: r.header_names,
    allowedTools: r.allowed_tools,
    timeoutMs: r.timeout_ms,
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** `mcp_servers_tenant_name_idx` refused the write. */
function nameTaken(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && e.constraint === 'mcp_servers_tenant_name_idx';
}

/**
 * Which row `ref` (an id, else a name) stands for: the where-clause tail and its parameter;
 * null for text no server can be called (a NUL byte or a lone surrogate must never reach SQL).
 */
function byRef(ref: string): { clause: string; value: string } | null {
  if (UUID_RE.test(ref)) return { clause: 'id = $2', value: ref.toLowerCase() };
  return MCP_SERVER_NAME_PATTERN.test(ref) ? { clause: 'name = $2', value: ref } : null;
}

/**
 * Inserts a server of `tenant`.
 * @throws McpServerNameTakenError when the tenant has a server of that name
 */
export async function createMcpServer(db: Queryable, tenant: string, input: McpServerInput): Promise<McpServerRecord> {
  const id = randomUUID();
  const headers = input.headers ?? {};
  try {
    const { rows } = await db.query<Row>(
      `insert into mcp_servers (id, tenant_id, name, url, transport, headers, header_names, allowed_tools, timeout_ms)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${COLUMNS}`,
      [id, tenant, input.name, input.url, input.transport, sealJson(headers, sealedAt(id)), Object.keys(headers).sort(), input.allowedTools, input.timeoutMs],
    );
    return toRecord(rows[0] as Row);
  } catch (err) {
    if (nameTaken(err)) throw new McpServerNameTakenError(input.name);
    throw err;
  }
}

/** The tenant's servers, by name. */
export async function listMcpServers(db: Queryable, tenant: string): Promise<McpServerRecord[]> {
  const { rows } = await db.query<Row>(`select ${COLUMNS} from mcp_servers where tenant_id = $1 order by name`, [tenant]);
  return rows.map(toRecord);
}

/** One server of the tenant by id or name; null when absent. */
export async function getMcpServer(db: Queryable, tenant: string, ref: string): Promise<McpServerRecord | null> {
  const by = byRef(ref);
  if (by === null) return null;
  const { clause, value } = by;
  const { rows } = await db.query<Row>(`select ${COLUMNS} from mcp_servers where tenant_id = $1 and ${clause}`, [tenant, value]);
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Replaces a server (by id or name); its headers only when `input.headers` is given. The
 * version grows, so cached connections to it are replaced.
 * @returns null when the tenant has no such server
 * @throws McpServerNameTakenError when the new name is another server's
 */
export async function updateMcpServer(db: Queryable, tenant: string, ref: string, input: McpServerInput): Promise<McpServerRecord | null> {
  const current = await getMcpServer(db, tenant, ref);
  if (current === null) return null;
  const headers = input.headers;
  try {
    const { rows } = await db.query<Row>(
      `update mcp_servers set name = $3, url = $4, transport = $5, allowed_tools = $6, timeout_ms = $7,
         headers = coalesce($8, headers), header_names = coalesce($9, header_names),
         version = version + 1, updated_at = now()
       where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
      [
        tenant,
        current.id,
        input.name,
        input.url,
        input.transport,
        input.allowedTools,
        input.timeoutMs,
        headers === undefined ? null : JSON.stringify(sealJson(headers, sealedAt(current.id))),
        headers === undefined ? null : Object.keys(headers).sort(),
      ],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  } catch (err) {
    if (nameTaken(err)) throw new McpServerNameTakenError(input.name);
    throw err;
  }
}

/** Deletes a server (by id or name); false when the tenant has no such server. */
export async function deleteMcpServer(db: Queryable, tenant: string, ref: string): Promise<boolean> {
  const by = byRef(ref);
  if (by === null) return false;
  const { clause, value } = by;
  const { rowCount } = await db.query(`delete from mcp_servers where tenant_id = $1 and ${clause}`, [tenant, value]);
  return (rowCount ?? 0) > 0;
}

/** The names of the tenant's servers among `names` (one query; graph validation). */
export async function existingMcpServerNames(db: Queryable, tenant: string, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await db.query<{ name: string }>('select name from mcp_servers where tenant_id = $1 and name = any($2::text[])', [tenant, names]);
  return new Set(rows.map((r) => r.name));
}

/** A server of the tenant by name with its headers opened (the workers connect with them); null when absent. */
export async function mcpServerForUse(db: Queryable, tenant: string, name: string): Promise<McpServerForUse | null> {
  if (!MCP_SERVER_NAME_PATTERN.test(name)) return null;
  const { rows } = await db.query<Row>(`select ${COLUMNS}, headers from mcp_servers where tenant_id = $1 and name = $2`, [tenant, name]);
  const row = rows[0];
  if (!row) return null;
  return { ...toRecord(row), headers: openJson<Record<string, string>>(row.headers, sealedAt(row.id)) };
}
