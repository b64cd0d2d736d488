import { describe, expect, it } from 'vitest';
import { BENCH_QUERY_TAG, shortQuery, statementDelta, statementTable, type StatementStat } from './statements';

const stat = (queryid: string, calls: number, totalMs: number, rows: number, over: Partial<StatementStat> = {}): StatementStat => ({
  queryid,
  toplevel: true,
  query: `select ${queryid}`,
  calls,
  totalMs,
  rows,
  ...over,
});

describe('statementDelta', () => {
  it('reports each statement’s calls, time and rows within the window, per node, largest total time first', () => {
    const a = [stat('1', 10, 5, 10), stat('2', 100, 10, 0)];
    const b = [stat('1', 30, 25, 50), stat('2', 300, 14, 0)];
    const rows = statementDelta(a, b, 100);
    expect(rows.map((r) => r.query)).toEqual(['select 1', 'select 2']);
    expect(rows[0]).toMatchObject({ calls: 20, callsPerNode: 0.2, totalMs: 20, meanMs: 1, rowsPerCall: 2 });
    expect(rows[1]).toMatchObject({ calls: 200, callsPerNode: 2, rowsPerCall: 0 });
    expect(rows[1]!.totalMs).toBeCloseTo(4, 9);
  });

  it('keeps a function’s nested statements apart from the same statement sent by a client', () => {
    const a = [stat('7', 1, 1, 1), stat('7', 1, 1, 1, { toplevel: false })];
    const b = [stat('7', 2, 2, 2), stat('7', 11, 6, 11, { toplevel: false })];
    const rows = statementDelta(a, b, 10);
    expect(rows.map((r) => [r.toplevel, r.calls])).toEqual([
      [false, 10],
      [true, 1],
    ]);
  });

  it('counts an entry first seen in the window, or restarted after eviction, from zero', () => {
    const rows = statementDelta([stat('3', 50, 50, 50)], [stat('3', 4, 2, 4), stat('4', 6, 1, 0)], 2);
    expect(rows.map((r) => [r.query, r.calls])).toEqual([
      ['select 3', 4],
      ['select 4', 6],
    ]);
  });

  it('leaves out the bench’s own tagged queries and statements that did not run in the window', () => {
    const a = [stat('5', 3, 1, 1)];
    const b = [stat('5', 3, 1, 1), stat('6', 9, 9, 9, { query: `${BENCH_QUERY_TAG} select count(*) from runs` })];
    expect(statementDelta(a, b, 1)).toEqual([]);
  });

  it('keeps the `limit` largest and, past them, only statements run at least `frequent` times per node', () => {
    const b = [...Array.from({ length: 5 }, (_, i) => stat(String(i), 1, i + 10, 0)), stat('begin', 50, 1, 0)];
    expect(statementDelta([], b, 100, 2, 0.5).map((r) => r.query)).toEqual(['select 4', 'select 3', 'select begin']);
    expect(statementDelta([], b, 10, 2, 0.1).map((r) => r.query)).toEqual(['select 4', 'select 3', 'select 2', 'select 1', 'select 0', 'select begin']);
  });
});

describe('statementTable', () => {
  it('renders one line per statement, whitespace folded, long text cut and pipes escaped', () => {
    const long = `select a || b\n   from t where x = $1 ${'and y = $2 '.repeat(20)}`;
    const [row] = statementDelta([], [stat('1', 4, 2, 8, { query: long, toplevel: false })], 8);
    const lines = statementTable([row!]);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain('`select a \\|\\| b from t where x = $1 and y');
    expect(lines[2]).toContain('…` | nested | 4 | 0.500 | 0.500 | 2.0 | 2.00 |');
    expect(shortQuery(long)).toHaveLength(110);
  });
});
