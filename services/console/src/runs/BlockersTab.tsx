/** The run view's "Waiting on" tab: what each non-terminal node waits for, since when (read with the run's other queries). */
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../session/session';
import { EmptyState, HeadRow, Loading, RefusalNote, Time, type Column } from '../ui/primitives';
import { StatusBadge } from '../ui/status';
import { describeBlocker } from './blockers';

const COLUMNS: readonly Column[] = [{ label: 'Node' }, { label: 'Status' }, { label: 'Waits for' }, { label: 'Since' }];

export function BlockersTab({ runId, pollMs, now, onSelect }: { runId: string; pollMs: number | false; now: number; onSelect(nodeKey: string): void }) {
  const client = useClient();
  const q = useQuery({ queryKey: ['run', runId, 'blockers'], queryFn: () => client.runs.blockers(runId), refetchInterval: pollMs });
  if (q.isPending) return <Loading label="Reading what the run waits for" />;
  if (q.error) return <RefusalNote error={q.error} title="Could not read what the run waits for" />;
  const { blockers } = q.data;
  if (blockers.length === 0) return <EmptyState title="Nothing waits">Every node has settled.</EmptyState>;
  return (
    <table className="table table-compact blockers-table">
      <thead>
        <HeadRow columns={COLUMNS} />
      </thead>
      <tbody>
        {blockers.map((b) => (
          <tr key={b.nodeKey} data-blocker-kind={b.kind} data-blocker-node={b.nodeKey}>
            <td>
              <button type="button" className="link-button mono" onClick={() => onSelect(b.nodeKey)}>
                {b.nodeKey}
              </button>
            </td>
            <td>
              <StatusBadge status={b.status} size="sm" />
            </td>
            <td>{describeBlocker(b)}</td>
            <td>{b.since ? <Time iso={b.since} now={now} /> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
