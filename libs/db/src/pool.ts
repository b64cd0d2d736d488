import pg from 'pg';
import { refuseNestedConnections } from './store/transaction';
import { decodeJson } from './json-codec';

/** Options of {@link createPool}. */
export interface PoolOptions {
  /** maximum connections @default 10 */
  max?: number;
  /** per-statement server-side timeout; 0 disables @default 0 */
  statementTimeoutMs?: number;
  /** a session idle inside a transaction this long is terminated by the server, freeing its locks @default 60000 */
  idleInTransactionTimeoutMs?: number;
  /** idle pooled connections are closed after this long @default 30000 */
  idleTimeoutMs?: number;
  /** connection attempt timeout @default 10000 */
  connectionTimeoutMs?: number;
  /** shown in pg_stat_activity @default 'flowline' */
  applicationName?: string;
  /**
   * refuse, with `NestedConnectionError`, a connection asked for from inside one of this
   * pool's transaction bodies (a deadlock under load); costs CPU on every promise, so tests
   * turn it on @default false
   */
  refuseNestedConnections?: boolean;
  /** receives errors of idle pooled clients (a dropped connection); they are otherwise swallowed */
  onIdleError?: (err: Error) => void;
}

/**
 * A pg Pool for Flowline: TCP keepalive on, `idle_in_transaction_session_timeout` set so
 * a hung client releases its row and advisory locks, optional `statement_timeout`.
 * `int8` (e.g. `count(*)`) is parsed to a JS number; `json` and `jsonb` values are decoded
 * with their numbers exact ({@link decodeJson}).
 */
export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    idleTimeoutMillis: opts.idleTimeoutMs ?? 30_000,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 10_000,
    application_name: opts.applicationName ?? 'flowline',
    idle_in_transaction_session_timeout: opts.idleInTransactionTimeoutMs ?? 60_000,
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    types: { getTypeParser: typeParser },
  });
  typeAcquireTimeouts(pool, opts.connectionTimeoutMs ?? 10_000);
  if (opts.refuseNestedConnections) refuseNestedConnections(pool);
  pool.on('error', (err) => opts.onIdleError?.(err));
  // pg-pool listens for errors only on idle clients. A checked-out client between
  // statements that the server terminates (Postgres restart, pg_terminate_backend) would
  // otherwise emit an unhandled 'error' and kill the process; its next query rejects and
  // pg-pool discards it on release.
  pool.on('connect', (client) => client.on('error', (err) => opts.onIdleError?.(err)));
  return pool;
}

/**
 * No connection within the pool's acquire timeout (`connectionTimeoutMs`): every client is
 * busy and none came free in time, or a new connection did not open in time. The caller
 * did nothing wrong; the database (or this process' share of it) is saturated, so a server
 * answers it as "retry later", never as an internal error.
 */
export class PoolTimeoutError extends Error {
  readonly code = 'PoolTimeout';
  constructor(
    readonly timeoutMs: number,
    options: { cause: unknown },
  ) {
    super(`no Postgres connection within ${timeoutMs} ms`, options);
    this.name = 'PoolTimeoutError';
  }
}

/**
 * The two errors pg-pool raises when `connectionTimeoutMillis` runs out: waiting in its
 * queue for a busy client, and opening a new connection. pg-pool gives them no `code`, so
 * their text is their only mark; this is the one place that reads it (pinned by
 * test/pool.int.test.ts against the installed pg-pool).
 */
const ACQUIRE_TIMEOUT_MESSAGES = new Set(['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout']);

function isAcquireTimeout(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === undefined && ACQUIRE_TIMEOUT_MESSAGES.has(err.message);
}

/**
 * Makes every acquire timeout of `pool` — `connect()` and the connection `query()` takes —
 * a {@link PoolTimeoutError}. pg-pool's `query` checks out through `this.connect(cb)`,
 * so wrapping `connect` covers both.
 */
function typeAcquireTimeouts(pool: pg.Pool, timeoutMs: number): void {
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const typed = (err: unknown) => (isAcquireTimeout(err) ? new PoolTimeoutError(timeoutMs, { cause: err }) : err);
  (pool as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    const cb = args[0];
    if (typeof cb === 'function') {
      return connect((err: unknown, ...rest: unknown[]) => (cb as (...a: unknown[]) => unknown)(err ? typed(err) : err, ...rest));
    }
    return (connect() as Promise<pg.PoolClient>).catch((err: unknown) => {
      throw typed(err);
    });
  };
}

const INT8_OID = 20;
const JSON_OID = 114;
const JSONB_OID = 3802;
function typeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8_OID) return (v: string) => Number(v);
  if (oid === JSON_OID || oid === JSONB_OID) return decodeJson;
  return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
}

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
