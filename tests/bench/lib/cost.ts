/**
 * Cost counters of one database and one Redis: committed transactions (pg_stat_database),
 * statements (pg_stat_statements calls, when loaded), WAL bytes (pg_current_wal_lsn) and
 * Redis commands (INFO commandstats). The bench's own monitoring queries are counted by
 * `Monitor` and subtracted, so a delta is the cluster's cost.
 */
import pg from 'pg';
import type { Redis } from 'ioredis';

export interface Counters {
  at: number;
  xacts: number;
  /** next transaction id: its delta counts write transactions server-wide (read-only ones take no xid) */
  xid: number;
  statements: number | null;
  /** pg_stat_statements calls by statement text (the bench's own queries included) */
  statementsByQuery: Record<string, number>;
  walBytes: number;
  redisCommands: number;
  /** Redis calls by command (INFO commandstats, `info` left out) */
  redisByCommand: Record<string, number>;
  /** the bench's own queries up to this snapshot (each one transaction, one statement) */
  ownQueries: number;
}

export interface CostDelta {
  seconds: number;
  /** commits incl. read-only ones (pg_stat_database: backends report it up to ~10 s late) */
  xacts: number;
  /** write transactions (xid delta; exact, server-wide; the bench's reads take none) */
  writeXacts: number;
  statements: number | null;
  /** pg_stat_statements calls over the window by statement (its first 120 characters, whitespace folded), most first */
  statementsByQuery: Record<string, number>;
  walBytes: number;
  redisCommands: number;
  /** Redis calls by command over the window (a script's calls count under their own names and under evalsha) */
  redisByCommand: Record<string, number>;
}

/** A pool for the bench's reads that counts its own queries. */
export class Monitor {
  readonly pool: pg.Pool;
  queries = 0;
  private readonly dbName: string;

  constructor(
    readonly databaseUrl: string,
    private readonly redis: Redis,
    private readonly statements: boolean,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: 'flowline-bench' });
    this.dbName = new URL(databaseUrl).pathname.slice(1);
  }

  async query<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    this.queries++;
    return (await this.pool.query<R>(text, params)).rows;
  }

  async snapshot(): Promise<Counters> {
    // pg_stat_* are per-backend snapshots inside a transaction: ask outside of one, and clear the cache.
    const [x] = await this.query<{ x: string; wal: string; xid: string }>(
      `select (select xact_commit from pg_stat_database where datname = $1)::text as x,
              pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as wal,
              pg_snapshot_xmax(pg_current_snapshot())::text as xid`,
      [this.dbName],
    );
    let statements: number | null = null;
    const statementsByQuery: Record<string, number> = {};
    if (this.statements) {
      const rows = await this.query<{ q: string; n: string }>(
        `select s.query as q, s.calls::text as n from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`,
        [this.dbName],
      );
      statements = 0;
      for (const r of rows) {
        const q = r.q.replace(/\s+/g, ' ').trim().slice(0, 120);
        statements += Number(r.n);
        statementsByQuery[q] = (statementsByQuery[q] ?? 0) + Number(r.n);
      }
    }
    const info = await this.redis.info('commandstats');
    let redisCommands = 0;
    const redisByCommand: Record<string, number> = {};
    for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
      if (m[1] === 'info') continue;
      redisCommands += Number(m[2]);
      redisByCommand[m[1]!] = Number(m[2]);
    }
    return {
      at: Date.now(),
      xacts: Number(x!.x),
      xid: Number(x!.xid),
      statements,
      statementsByQuery,
      walBytes: Number(x!.wal),
      redisCommands,
      redisByCommand,
      ownQueries: this.queries,
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The cluster's cost between two snapshots (bench queries taken out). */
export function delta(a: Counters, b: Counters): CostDelta {
  const own = b.ownQueries - a.ownQueries;
  return {
    seconds: (b.at - a.at) / 1000,
    xacts: b.xacts - a.xacts - own,
    writeXacts: b.xid - a.xid,
    statements: a.statements === null || b.statements === null ? null : b.statements - a.statements - own,
    statementsByQuery: countsBetween(a.statementsByQuery, b.statementsByQuery),
    walBytes: b.walBytes - a.walBytes,
    redisCommands: b.redisCommands - a.redisCommands,
    redisByCommand: countsBetween(a.redisByCommand, b.redisByCommand),
  };
}

/** The counts that grew from `a` to `b`, by how much, most first. */
function countsBetween(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(b)
      .map(([k, n]) => [k, n - (a[k] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort((x, y) => y[1] - x[1]),
  );
}

/** Per-node figures of a delta. */
export function perNode(d: CostDelta, nodes: number) {
  return {
    nodes,
    xactsPerNode: d.xacts / nodes,
    writeXactsPerNode: d.writeXacts / nodes,
    statementsPerNode: d.statements === null ? null : d.statements / nodes,
    walBytesPerNode: d.walBytes / nodes,
    redisCommandsPerNode: d.redisCommands / nodes,
  };
}
