/** Shard leases among dispatchers, expiring on the database clock (see flowline_claim_shards). */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Queryable } from './transaction';

/**
 * Heartbeats `dispatcherId` and rebalances: renews its leases, releases those beyond its fair
 * share (ceil(shardCount / live dispatchers)), takes expired or unowned shards up to it.
 * Returns the shards it owns now, ascending; call again well within `leaseMs` (e.g. every
 * leaseMs / 3). A dispatcher that stops calling loses its shards after `leaseMs`; one that
 * registered `livenessKey` (a session advisory lock it holds, see {@link DispatcherLiveness})
 * loses them on a peer's next claim once that lock is gone. `null`: judged by its lease alone.
 */
export async function claimShards(
  db: Queryable,
  dispatcherId: string,
  shardCount: number,
  leaseMs: number,
  livenessKey: bigint | null = null,
): Promise<number[]> {
  const res = await db.query<{ shards: number[] }>({
    name: 'flowline_claim_shards',
    text: 'SELECT flowline_claim_shards($1, $2, $3, $4) AS shards',
    values: [dispatcherId, shardCount, Math.round(leaseMs), livenessKey === null ? null : livenessKey.toString()],
  });
  return res.rows[0]!.shards;
}

/**
 * Whether some dispatcher still live by its lease has lost its liveness lock (its process is
 * gone): then a claim now takes its shards. One cheap read, polled more often than leases renew.
 */
export async function deadDispatcherExists(db: Queryable): Promise<boolean> {
  const res = await db.query<{ dead: boolean }>({
    name: 'flowline_dead_dispatcher_exists',
    text: 'SELECT EXISTS (SELECT 1 FROM flowline_dead_dispatchers()) AS dead',
  });
  return res.rows[0]!.dead;
}

/**
 * How many shards a live dispatcher holds now: an owned, unexpired lease whose owner has not
 * lost its liveness lock. 0 means no dispatcher moves any run (the API's readiness says so).
 */
export async function heldShardCount(db: Queryable): Promise<number> {
  const res = await db.query<{ held: number }>({
    name: 'flowline_held_shard_count',
    text: `SELECT count(*)::int AS held FROM shard_leases l
      WHERE l.owner IS NOT NULL AND l.expires_at > now()
        AND NOT EXISTS (SELECT 1 FROM flowline_dead_dispatchers() d WHERE d.id = l.owner)`,
  });
  return res.rows[0]!.held;
}

/** Liveness keys stay below 2^62: positive, so pg_locks' two unsigned halves rebuild them exactly. */
const MAX_LIVENESS_KEY = 2n ** 62n;

/**
 * A dispatcher's proof of life: a session-level advisory lock on a random key, held on a
 * connection of its own for the process's whole life. Postgres drops the lock the moment that
 * session ends, which a SIGKILL of the process causes at once (the kernel closes its socket).
 * The connection is not from the pool: a pooled client would hand the session to other work.
 */
export class DispatcherLiveness {
  /** a random positive key (no two processes pick the same one in practice; a clash only delays a takeover to the lease) */
  readonly key: bigint = (BigInt(`0x${randomBytes(8).toString('hex')}`) % (MAX_LIVENESS_KEY - 1n)) + 1n;
  private client: pg.Client | null = null;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly onLost: (err: unknown) => void = () => undefined,
  ) {}

  /** Whether the lock is held right now (claims name the key only then). */
  get held(): boolean {
    return this.client !== null;
  }

  /** Connects and takes the lock; rejects when Postgres cannot be reached (the caller retries). */
  async acquire(): Promise<void> {
    if (this.closed || this.client !== null) return;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'flowline-dispatcher-liveness' });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('liveness connection ended')));
    await client.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [this.key.toString()]);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
  }

  /** Ends the session, which releases the lock. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    if (!this.closed) this.onLost(err);
  }
}

/*
 * Input: $1 dispatcher id. Effect: its leases are freed (expired now) and its row removed,
 * so the others take its shards on their next claim. Result: shards released.
 */
const RELEASE_SQL = `
WITH released AS (
  UPDATE shard_leases SET owner = NULL, expires_at = now() WHERE owner = $1 RETURNING shard),
gone AS (DELETE FROM dispatchers WHERE id = $1 RETURNING id)
SELECT count(*)::int AS n FROM released`;

/** Gives up every shard of `dispatcherId` at shutdown. */
export async function releaseShards(db: Queryable, dispatcherId: string): Promise<number> {
  const res = await db.query<{ n: number }>(RELEASE_SQL, [dispatcherId]);
  return res.rows[0]!.n;
}
