/**
 * Open MCP client sessions, one per server (per tenant for remote servers, one for the
 * deployment for each stdio server), reused by every call to it: MCP multiplexes requests
 * over a session, so concurrent calls share it. Each session keeps its tool listing (all
 * pages), dropped when the server sends `notifications/tools/list_changed` and read again on
 * next use. A session is replaced when its server's `version` changes (the tenant edited
 * it), closed when it fails (the next call reconnects), and the least recently used idle
 * one is closed past `maxConnections`.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '@flowline/graph';
import type { ToolLogger } from '../tool-definition';
import { classifyMcpError } from './errors';
import { checkServerUrl, guardedFetch, type AllowedHosts } from './network-guard';
import type { McpServerSpec } from './server-spec';

/** A tool as its server lists it, with its input schema compiled. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
  /** null when the server's schema cannot be compiled: every call is then refused */
  validate: ValidateFunction | null;
}

/** One session. */
export interface Connection {
  readonly spec: McpServerSpec;
  readonly client: Client;
  /** the tool listing, read once (shared by every caller, so no caller's signal aborts it) and dropped on `list_changed` */
  tools(): Promise<ReadonlyMap<string, ListedTool>>;
  /** calls in flight: a busy session is not evicted */
  inFlight: number;
}

export interface ConnectionPoolOptions {
  allowedHosts: AllowedHosts;
  /** false: a stdio server is refused (the API never starts processes) */
  spawnStdio: boolean;
  maxConnections: number;
  connectTimeoutMs: number;
  logger?: ToolLogger;
}

/** Most tool pages read from one server (a guard against a server paging forever). */
const MAX_LIST_PAGES = 50;

// formats (uri, email…) are the server's to judge: an unknown one is ignored, silently
const ajv = new Ajv({ allErrors: true, strict: false, logger: false });

function compile(schema: JsonObject): ValidateFunction | null {
  // a `$schema` naming a draft ajv was not built with would refuse the whole schema
  const { $schema: _ignored, ...rest } = schema;
  try {
    return ajv.compile(rest);
  } catch {
    return null;
  }
}

function transportOf(spec: McpServerSpec, opts: ConnectionPoolOptions): Transport {
  if (spec.transport === 'stdio') {
    return new StdioClientTransport({
      command: spec.command,
      args: [...spec.args],
      env: { ...getDefaultEnvironment(), ...spec.env },
      ...(spec.cwd !== null ? { cwd: spec.cwd } : {}),
      // the server's diagnostics are its own; they never reach Flowline's logs
      stderr: 'ignore',
    });
  }
  const url = checkServerUrl(spec.url, opts.allowedHosts);
  const requestInit = { headers: { ...spec.headers } };
  const fetch = guardedFetch(opts.allowedHosts);
  return spec.transport === 'sse' ? new SSEClientTransport(url, { requestInit, fetch }) : new StreamableHTTPClientTransport(url, { requestInit, fetch });
}

/** The pool: `get` connects (once, shared by concurrent callers) or reuses. */
export class ConnectionPool {
  private readonly open = new Map<string, Promise<Connection>>();

  constructor(private readonly opts: ConnectionPoolOptions) {}

  /**
   * The session of `spec` under `key`, connecting when none is open (or the open one is of
   * another version).
   * @throws ToolError — unreachable (NodeFailed), refused address or stdio refused (ValidationFailed)
   */
  async get(key: string, spec: McpServerSpec): Promise<Connection> {
    const existing = this.open.get(key);
    if (existing) {
      const conn = await existing.catch(() => null);
      if (conn && conn.spec.version === spec.version && sameTarget(conn.spec, spec)) {
        // most recently used last: eviction takes from the front
        this.open.delete(key);
        this.open.set(key, existing);
        return conn;
      }
      if (this.open.get(key) === existing) this.drop(key, existing);
    }
    const pending = this.connect(spec);
    this.open.set(key, pending);
    pending.catch(() => {
      if (this.open.get(key) === pending) this.open.delete(key);
    });
    this.evict();
    const conn = await pending;
    conn.client.onclose = () => {
      if (this.open.get(key) === pending) this.open.delete(key);
    };
    return conn;
  }

  /** Closes the session under `key` (a failed one: the next call reconnects). */
  discard(key: string, conn: Connection): void {
    const current = this.open.get(key);
    if (current === undefined) return;
    void current.then((c) => {
      if (c === conn && this.open.get(key) === current) this.drop(key, current);
    }, () => undefined);
  }

  /** Closes every session (shutdown). */
  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((p) => p.then((c) => c.client.close(), () => undefined).catch(() => undefined)));
  }

  private drop(key: string, pending: Promise<Connection>): void {
    this.open.delete(key);
    void pending.then((c) => c.client.close()).catch(() => undefined);
  }

  private evict(): void {
    if (this.open.size <= this.opts.maxConnections) return;
    for (const [key, pending] of this.open) {
      if (this.open.size <= this.opts.maxConnections) return;
      void pending.then(
        (c) => {
          if (c.inFlight === 0 && this.open.get(key) === pending) this.drop(key, pending);
        },
        () => undefined,
      );
    }
  }

  private async connect(spec: McpServerSpec): Promise<Connection> {
    if (spec.transport === 'stdio' && !this.opts.spawnStdio) {
      throw classifyMcpError(new Error('stdio servers are started by the workers only'), null, spec.name, null, 'connect');
    }
    const client = new Client({ name: 'flowline', version: '1' }, { capabilities: {} });
    let listing: Promise<ReadonlyMap<string, ListedTool>> | null = null;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listing = null;
      this.opts.logger?.debug({ mcpServer: spec.name }, 'MCP tool list changed; read again on next use');
    });
    try {
      await client.connect(transportOf(spec, this.opts), { timeout: this.opts.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw classifyMcpError(error, null, spec.name, null, 'connect');
    }
    const readTools = async (): Promise<ReadonlyMap<string, ListedTool>> => {
      const tools = new Map<string, ListedTool>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const res = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: spec.timeoutMs });
        for (const t of res.tools) {
          const inputSchema = t.inputSchema as JsonObject;
          tools.set(t.name, { name: t.name, description: t.description ?? '', inputSchema, validate: compile(inputSchema) });
        }
        cursor = res.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    };
    return {
      spec,
      client,
      inFlight: 0,
      tools() {
        if (listing === null) {
          const reading = readTools();
          listing = reading;
          reading.catch(() => {
            if (listing === reading) listing = null;
          });
        }
        return listing;
      },
    };
  }
}

function sameTarget(a: McpServerSpec, b: McpServerSpec): boolean {
  if (a.transport !== b.transport) return false;
  if (a.transport === 'stdio' || b.transport === 'stdio') return true;
  return a.url === b.url;
}
