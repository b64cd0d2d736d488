/**
 * Cost counters of one database and one Redis: committed transactions (pg_stat_database),
 * statements (pg_stat_statements calls, when loaded), WAL bytes (pg_current_wal_lsn) and
 * Redis commands (INFO commandstats). The bench's own monitoring queries are counted by
 * `Monitor` and subtracted, so a delta is the cluster's cost.
 */
import pg from 'pg';
import type { Redis } from 'ioredis';
import { BENCH_QUERY_TAG, type StatementStat } from './statements';

export interface Counters {
  at: number;
  xacts: number;
  /** next transaction id: its delta counts write transactions server-wide (read-only ones take no xid) */
  xid: number;
  statements: number | null;
  /** statements sent by clients (pg_stat_statements `toplevel`): the others ran inside a function */
  topStatements: number | null;
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
  topStatements: number | null;
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
    // pool.end() resolves before its clients' sockets close: the server's shutdown right after
    // may still reach one, which is harmless and must not crash the bench before it writes its report
    this.pool.on('error', () => undefined);
    this.dbName = new URL(databaseUrl).pathname.slice(1);
  }

  async query<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    this.queries++;
    // tagged so the per-statement table can leave the bench's own queries out
    return (await this.pool.query<R>(`${BENCH_QUERY_TAG} ${text}`, params)).rows;
  }

  /** Every pg_stat_statements entry of this database (cumulative; {@link statementDelta} diffs two). */
  async statementStats(): Promise<StatementStat[]> {
    const rows = await this.query<{ queryid: string; toplevel: boolean; query: string; calls: string; total: number; rows: string }>(
      `select s.queryid::text as queryid, s.toplevel, s.query, s.calls::text as calls,
              s.total_exec_time as total, s.rows::text as rows
         from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`,
      [this.dbName],
    );
    return rows.map((r) => ({
      queryid: r.queryid,
      toplevel: r.toplevel,
      query: r.query,
      calls: Number(r.calls),
      totalMs: Number(r.total),
      rows: Number(r.rows),
    }));
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
    let topStatements: number | null = null;
    if (this.statements) {
      const [s] = await this.query<{ n: string; top: string }>(
        `select coalesce(sum(calls), 0)::text as n, coalesce(sum(calls) filter (where toplevel), 0)::text as top
           from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`,
        [this.dbName],
      );
      statements = Number(s!.n);
      topStatements = Number(s!.top);
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
      topStatements,
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
    topStatements: a.topStatements === null || b.topStatements === null ? null : b.topStatements - a.topStatements - own,
    walBytes: b.walBytes - a.walBytes,
    redisCommands: b.redisCommands - a.redisCommands,
    redisByCommand: Object.fromEntries(
      Object.entries(b.redisByCommand)
        .map(([k, n]) => [k, n - (a.redisByCommand[k] ?? 0)] as const)
        .filter(([, n]) => n > 0)
        .sort((x, y) => y[1] - x[1]),
    ),
  };
}

/** Per-node figures of a delta. */
export function perNode(d: CostDelta, nodes: number) {
  return {
    nodes,
    xactsPerNode: d.xacts / nodes,
    writeXactsPerNode: d.writeXacts / nodes,
    statementsPerNode: d.statements === null ? null : d.statements / nodes,
    topStatementsPerNode: d.topStatements === null ? null : d.topStatements / nodes,
    walBytesPerNode: d.walBytes / nodes,
    redisCommandsPerNode: d.redisCommands / nodes,
  };
}
