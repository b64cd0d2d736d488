/**
 * Per-statement cost of a workload window from pg_stat_statements: which statements the
 * cluster ran per succeeded node, how long they took and how many rows they touched. The
 * bench's Postgres tracks nested statements too (`track=all`), so a plpgsql function shows
 * as its top-level call plus the statements inside it; `toplevel` keeps them apart, and
 * only top-level calls are round trips from a client.
 *
 * The bench's own monitoring queries carry a {@link BENCH_QUERY_TAG} comment, which
 * pg_stat_statements keeps in its query text, and are left out here.
 */

/** Leading comment on every query of the bench's monitor, so its statements can be told apart. */
export const BENCH_QUERY_TAG = '/* flowline-bench */';

/** One pg_stat_statements entry (cumulative since the server started). */
export interface StatementStat {
  queryid: string;
  toplevel: boolean;
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/** One statement's share of a window. */
export interface StatementRow {
  query: string;
  toplevel: boolean;
  calls: number;
  callsPerNode: number;
  totalMs: number;
  meanMs: number;
  rowsPerCall: number;
}

const key = (s: StatementStat) => `${s.queryid}:${s.toplevel ? 't' : 'n'}`;

/**
 * The statements that ran between snapshots `a` and `b` (bench queries left out), by total
 * time: the `limit` largest, and every other one called at least `frequent` times per node
 * (a cheap statement run on every node, BEGIN or COMMIT, counts as a round trip). An entry missing from `a` started at zero (first seen in the
 * window, or evicted and re-entered: pg_stat_statements then restarts its counters).
 */
export function statementDelta(a: StatementStat[], b: StatementStat[], nodes: number, limit = 25, frequent = 0.05): StatementRow[] {
  const before = new Map(a.map((s) => [key(s), s]));
  const rows: StatementRow[] = [];
  for (const s of b) {
    if (s.query.startsWith(BENCH_QUERY_TAG)) continue;
    const p = before.get(key(s));
    const restarted = !p || p.calls > s.calls;
    const calls = restarted ? s.calls : s.calls - p.calls;
    if (calls <= 0) continue;
    const totalMs = restarted ? s.totalMs : s.totalMs - p.totalMs;
    const touched = restarted ? s.rows : s.rows - p.rows;
    rows.push({
      query: s.query,
      toplevel: s.toplevel,
      calls,
      callsPerNode: nodes > 0 ? calls / nodes : 0,
      totalMs,
      meanMs: totalMs / calls,
      rowsPerCall: touched / calls,
    });
  }
  return rows
    .sort((x, y) => y.totalMs - x.totalMs || y.calls - x.calls)
    .filter((r, i) => i < limit || r.callsPerNode >= frequent);
}

/** A statement's text on one line, at most `width` characters. */
export function shortQuery(query: string, width = 110): string {
  const one = query.replace(/\s+/g, ' ').trim();
  return one.length <= width ? one : `${one.slice(0, width - 1)}…`;
}

const num = (x: number, digits: number) => x.toFixed(digits);

/** The markdown table of {@link statementDelta}'s rows (a `|` inside a statement is escaped). */
export function statementTable(rows: StatementRow[]): string[] {
  const out = [
    '| statement | level | calls | calls/node | mean ms | total ms | rows/call |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    out.push(
      `| \`${shortQuery(r.query).replace(/\|/g, '\\|')}\` | ${r.toplevel ? 'top' : 'nested'} | ${r.calls} | ${num(r.callsPerNode, 3)} | ${num(r.meanMs, 3)} | ${num(r.totalMs, 1)} | ${num(r.rowsPerCall, 2)} |`,
    );
  return out;
}
