// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { NodeRunSummary } from '@flowline/client';
import { NodeTable, ROW_HEIGHT, WINDOW_FROM, visibleRows } from './NodeTable';

const nodeRuns = (n: number): NodeRunSummary[] =>
  Array.from({ length: n }, (_, i) => ({
    nodeKey: `n${String(i).padStart(3, '0')}`, kind: 'Tool', status: 'Succeeded', attempt: 1, failureClass: 'None', reason: null,
    pendingDecisionKind: null, childRunId: null, startedAt: null, finishedAt: null,
  }) as NodeRunSummary);

afterEach(cleanup);

describe('the node table', () => {
  it('draws every row of a short run', () => {
    render(<NodeTable nodeRuns={nodeRuns(9)} labels={new Map()} now={0} onSelect={() => undefined} />);
    expect(document.querySelectorAll('tbody tr[data-node-key]')).toHaveLength(9);
    expect(document.querySelector('.row-spacer')).toBeNull();
  });

  it('marks the node runs a fork reused from its source run', () => {
    const rows = nodeRuns(3);
    rows[1] = { ...rows[1]!, reusedFrom: 'source-run' };
    render(<NodeTable nodeRuns={rows} labels={new Map()} now={0} onSelect={() => undefined} />);
    expect(document.querySelectorAll('[data-reused-from]')).toHaveLength(1);
    expect(document.querySelector('tr[data-node-key="n001"] [data-reused-from="source-run"]')?.textContent).toBe('reused');
  });

  it('draws only the rows in view of a long run, spacing out the rest to the whole height', () => {
    const count = 200;
    expect(count).toBeGreaterThan(WINDOW_FROM);
    render(<NodeTable nodeRuns={nodeRuns(count)} labels={new Map()} now={0} onSelect={() => undefined} />);
    const drawn = document.querySelectorAll('tbody tr[data-node-key]');
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.length).toBeLessThan(40);
    expect(drawn[0]!.getAttribute('data-node-key')).toBe('n000');
    expect(drawn[0]!.getAttribute('aria-rowindex')).toBe('2');
    expect(screen.getByRole('table').getAttribute('aria-rowcount')).toBe(String(count + 1));
    const spacer = [...document.querySelectorAll<HTMLElement>('.row-spacer')].reduce((h, r) => h + Number.parseFloat(r.style.height), 0);
    expect(spacer).toBe((count - drawn.length) * ROW_HEIGHT);
  });

  it('windows by the scroll position: the view plus a margin each side, within the table', () => {
    expect(visibleRows(200, 0, 520)).toEqual({ start: 0, end: Math.ceil(520 / ROW_HEIGHT) + 8 });
    const mid = visibleRows(200, 100 * ROW_HEIGHT, 10 * ROW_HEIGHT);
    expect(mid).toEqual({ start: 92, end: 118 });
    expect(visibleRows(200, 1e6, 520)).toEqual({ start: 200, end: 200 });
    expect(visibleRows(200, -300, 520).start).toBe(0);
  });
});
