/**
 * Transactions of the store. A function that runs inside a transaction is handed a
 * {@link Tx} — the transaction's own connection, able to query and nothing else — and may
 * not take another connection from the pool: a body that waits for a second connection
 * while holding one deadlocks the pool as soon as every connection is held by such a body
 * (50 concurrent replays of one key exhausted 10 connections). Two guards keep
 * it so: functions that belong inside a transaction take a `Tx` (a Pool is not one), and a
 * pool made with `createPool({ refuseNestedConnections: true })` — every test database's
 * pool — refuses `connect()`/`query()` from inside a transaction body of the same pool with
 * {@link NestedConnectionError}. That check tracks transaction bodies with an
 * AsyncLocalStorage, whose promise hooks cost every promise of the process (~10% of the
 * API's CPU per request on Node 20), so production pools go without it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient } from 'pg';
import { claimAuditEntry, insertAuditRow, type AuditEntry } from './audit-context';

/** Anything a store statement runs on: the pool, a checked-out client, or an open transaction's connection. */
export type Queryable = Pick<Pool, 'query'> | PoolClient;

declare const TX: unique symbol;

/** The connection of an open transaction: it queries, nothing else (no release, no second connection). */
export interface Tx {
  query: PoolClient['query'];
  readonly [TX]: true;
}

/** Raised when a transaction body asks its pool for another connection. */
export class NestedConnectionError extends Error {
  readonly code = 'NestedConnection';
  constructor() {
    super('a transaction body asked its pool for a second connection; use the transaction client it was given');
    this.name = 'NestedConnectionError';
  }
}

interface Scope {
  pool: Pool;
  /** false once the transaction ended (work it spawned may outlive it) */
  open: boolean;
}

const scope = new AsyncLocalStorage<Scope>();
/** pools made to refuse nested connections; only their transactions are tracked */
const guarded = new WeakSet<Pool>();

/** True when the caller runs inside an open transaction body of `pool`. */
function insideTransactionOf(pool: Pool): boolean {
  const s = scope.getStore();
  return s !== undefined && s.open && s.pool === pool;
}

/**
 * Makes `pool` refuse connections asked for from inside one of its own transaction bodies
 * ({@link withTransaction}). pg-pool's `query()` takes its connection through `connect()`,
 * so both are covered.
 */
export function refuseNestedConnections(pool: Pool): void {
  guarded.add(pool);
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (insideTransactionOf(pool)) {
      const err = new NestedConnectionError();
      const cb = args[0];
      if (typeof cb === 'function') {
        queueMicrotask(() => (cb as (e: Error) => void)(err));
        return undefined;
      }
      return Promise.reject(err);
    }
    return connect(...args);
  };
}

/**
 * Runs `body` in one transaction on one pooled connection: BEGIN, body, COMMIT (ROLLBACK
 * and rethrow when it throws). The body returns `{ rollback: value }` to roll back and
 * answer `value` (a refusal that must leave nothing behind).
 *
 * Inside an API request (audit-context.ts) the first transaction that commits writes the
 * request's audit row just before its COMMIT: the change and its record commit together or not
 * at all. The row goes in unchained, so this adds one insert and no lock a run start would wait on.
 */
export async function withTransaction<T>(pool: Pool, body: (tx: Tx) => Promise<T | Rollback<T>>): Promise<T> {
  const client = await pool.connect();
  const s: Scope = { pool, open: true };
  let destroy = false;
  try {
    const inScope = guarded.has(pool) ? (f: () => Promise<T>) => scope.run(s, f) : (f: () => Promise<T>) => f();
    return await inScope(async () => {
      const tx = { query: client.query.bind(client) } as Tx;
      let audit: AuditEntry | null = null;
      try {
        await client.query('BEGIN');
        const out = await body(tx);
        if (out instanceof Rollback) {
          await client.query('ROLLBACK');
          return out.value as T;
        }
        audit = claimAuditEntry();
        const auditRow = audit === null ? null : await insertAuditRow(tx, audit, null, null);
        await client.query('COMMIT');
        if (audit !== null) audit.rowId = auditRow;
        return out;
      } catch (err) {
        // the row rolled back with the change: a later commit of the request writes it
        if (audit !== null) audit.claimed = false;
        // a connection that cannot even roll back is not handed to the next caller
        await client.query('ROLLBACK').catch(() => {
          destroy = true;
        });
        throw err;
      }
    });
  } finally {
    s.open = false;
    client.release(destroy);
  }
}

/** The answer of a transaction body that rolls back (see {@link withTransaction}). */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/** Rolls the transaction back and answers `value`. */
export function rollback<T>(value: T): Rollback<T> {
  return new Rollback(value);
}
