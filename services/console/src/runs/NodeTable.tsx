/** The node runs of a run, in the pinned document's order; a row selects its node. */
import { Link } from '@tanstack/react-router';
import type { NodeRunSummary } from '@flowline/client';
import { StatusBadge } from '../ui/status';
import { durationText } from '../ui/primitives';
import { KIND_GLYPH } from '../ui/kinds';

export function NodeTable({ runId, nodeRuns, labels, selected, now }: { runId: string; nodeRuns: readonly NodeRunSummary[]; labels: ReadonlyMap<string, string>; selected?: string | undefined; now: number }) {
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
          <tr key={n.nodeKey} data-node-key={n.nodeKey} data-status={n.status} className={selected === n.nodeKey ? 'is-selected' : undefined}>
            <td>
              <Link
                to="/run"
                search={(prev) => ({ ...prev, runId, nodeKey: n.nodeKey, edgeKey: undefined })}
                className="row-link"
                aria-current={selected === n.nodeKey ? 'true' : undefined}
              >
                {labels.get(n.nodeKey) ?? n.nodeKey}
              </Link>
              {labels.get(n.nodeKey) && labels.get(n.nodeKey) !== n.nodeKey ? <span className="mono muted small"> {n.nodeKey}</span> : null}
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
        ))}
      </tbody>
    </table>
  );
}
