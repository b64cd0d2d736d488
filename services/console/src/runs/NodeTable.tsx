/**
 * The node runs of a run, in the pinned document's order; a row's button selects its node.
 * Rows are memoised on what they show: a status change re-renders one row, and the table
 * holds no router link per row (each would re-render on every URL change).
 */
import { memo } from 'react';
import type { NodeRunSummary } from '@flowline/client';
import { StatusBadge } from '../ui/status';
import { durationText } from '../ui/primitives';
import { KIND_GLYPH } from '../ui/kinds';

const Row = memo(function Row({ n, label, selected, now, onSelect }: { n: NodeRunSummary; label: string | undefined; selected: boolean; now: number; onSelect(key: string): void }) {
  return (
    <tr data-node-key={n.nodeKey} data-status={n.status} className={selected ? 'is-selected' : undefined}>
      <td>
        <button type="button" className="link-button row-link" aria-pressed={selected} onClick={() => onSelect(n.nodeKey)}>
          {label ?? n.nodeKey}
        </button>
        {label && label !== n.nodeKey ? <span className="mono muted small"> {n.nodeKey}</span> : null}
      </td>
      <td>
        <span aria-hidden="true" className="muted">
          {KIND_GLYPH[n.kind] ?? '•'}{' '}
        </span>
        {n.kind}
      </td>
      <td>
        <StatusBadge status={n.status} size="sm" />
      </td>
      <td className="num">{n.attempt}</td>
      <td className="num">{durationText(n.startedAt, n.finishedAt, now)}</td>
      <td className="small wrap">
        {n.failureClass !== 'None' ? <span className="failure">{n.failureClass}</span> : null} {n.reason ?? ''}
      </td>
    </tr>
  );
});

export function NodeTable({ nodeRuns, labels, selected, now, onSelect }: { nodeRuns: readonly NodeRunSummary[]; labels: ReadonlyMap<string, string>; selected?: string | undefined; now: number; onSelect(key: string): void }) {
  return (
    <table className="table table-compact">
      <thead>
        <tr>
          <th scope="col">Node</th>
          <th scope="col">Kind</th>
          <th scope="col">Status</th>
          <th scope="col" className="num">
            Attempt
          </th>
          <th scope="col" className="num">
            Duration
          </th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {nodeRuns.map((n) => (
          <Row key={n.nodeKey} n={n} label={labels.get(n.nodeKey)} selected={selected === n.nodeKey} now={n.finishedAt ? 0 : now} onSelect={onSelect} />
        ))}
      </tbody>
    </table>
  );
}
