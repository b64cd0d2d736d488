/** The run view: the run's summary and its node runs. */
import { Link, getRouteApi } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { keys, useDefinitionIndex } from '../api/queries';
import { useClient } from '../session/session';
import { StatusBadge } from '../ui/status';
import { EmptyState, Loading, RefusalNote, ShortId, Time, durationText } from '../ui/primitives';

const route = getRouteApi('/run');

export function RunPage() {
  const { runId } = route.useSearch();
  const client = useClient();
  const defs = useDefinitionIndex();
  const run = useQuery({ queryKey: keys.run(runId ?? ''), queryFn: () => client.runs.get(runId!), enabled: !!runId, refetchInterval: 3_000 });
  if (!runId) {
    return (
      <div className="page">
        <EmptyState title="No run selected">
          <Link to="/runs">Pick one from the runs list.</Link>
        </EmptyState>
      </div>
    );
  }
  const now = run.dataUpdatedAt || Date.now();
  return (
    <div className="page">
      <RefusalNote error={run.error} title="Could not read the run" />
      {run.isPending ? <Loading label="Reading the run" /> : null}
      {run.data ? (
        <>
          <div className="page-head">
            <div>
              <h1 className="run-title">
                <StatusBadge status={run.data.run.status} /> <span className="mono">{runId.slice(0, 8)}</span>
              </h1>
              <p className="muted">
                {defs.get(run.data.run.definitionId)?.name ?? 'definition'} · <ShortId id={runId} /> · started{' '}
                <Time iso={run.data.run.startedAt ?? run.data.run.createdAt} now={now} />
              </p>
            </div>
          </div>
          <div className="card table-card">
            <table className="table">
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
                </tr>
              </thead>
              <tbody>
                {run.data.nodeRuns.map((n) => (
                  <tr key={n.nodeKey} data-node-key={n.nodeKey} data-status={n.status}>
                    <td className="mono">{n.nodeKey}</td>
                    <td>{n.kind}</td>
                    <td>
                      <StatusBadge status={n.status} size="sm" />
                    </td>
                    <td className="num">{n.attempt}</td>
                    <td className="num">{durationText(n.startedAt, n.finishedAt, now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </div>
  );
}
