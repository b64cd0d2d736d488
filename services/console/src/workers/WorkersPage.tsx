/**
 * Workers and queues (`GET /v1/workers`, refreshed every few seconds): per lane, how many jobs
 * wait for a worker and for how long, and each worker's identity, what runs on it against its
 * concurrency, and when it last made progress and last said it was alive. A lane with jobs
 * waiting and no worker, or a worker that took or finished nothing for a minute while jobs
 * wait, is flagged. An `admin` key gets the link to the queue UI (Bull Board), which shows
 * the jobs themselves.
 */
import { useQuery } from '@tanstack/react-query';
import type { LaneInfo, LaneWorkerInfo } from '@flowline/client';
import { useCan, useClient } from '../session/session';
import { EmptyState, HeadRow, RefusalNote, SkeletonRows, relativeTime, useNow, type Column } from '../ui/primitives';

const POLL_MS = 3_000;
/** No job taken or finished for this long while jobs wait: the worker looks stuck. */
const STUCK_MS = 60_000;

const LANE_LABELS: Record<LaneInfo['lane'], string> = { llm: 'LLM lane', tool: 'Tool lane' };

const COLUMNS: readonly Column[] = [
  { label: 'Worker' },
  { label: 'Running', num: true },
  { label: 'Last progress' },
  { label: 'Heartbeat' },
  { label: 'Started' },
];

/** "1.2 s", "3 min": how long something has waited. */
function waitText(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function WorkersPage() {
  const client = useClient();
  const isAdmin = useCan('admin');
  const now = useNow(true);
  const q = useQuery({ queryKey: ['workers'], queryFn: () => client.workers(), refetchInterval: POLL_MS });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Workers</h1>
          <p className="muted">The lanes every tenant shares: the jobs waiting on each and the worker processes serving it.</p>
        </div>
        {isAdmin ? (
          <a className="btn" href="/admin/queues">
            Open the queue UI
          </a>
        ) : null}
      </div>
      <RefusalNote error={q.error} title="Could not read the workers" />
      {q.isPending ? (
        <div className="card table-card">
          <table className="table">
            <tbody>
              <SkeletonRows rows={3} cols={COLUMNS.length} />
            </tbody>
          </table>
        </div>
      ) : null}
      {q.data?.lanes.map((lane) => <LaneCard key={lane.lane} lane={lane} now={now} />)}
    </div>
  );
}

function LaneCard({ lane, now }: { lane: LaneInfo; now: number }) {
  const headingId = `lane-${lane.lane}`;
  const capacity = lane.workers.reduce((n, w) => n + w.concurrency, 0);
  const running = lane.workers.reduce((n, w) => n + w.inFlight, 0);
  const unserved = lane.depth > 0 && lane.workers.length === 0;
  return (
    <section className="card lane-card" aria-labelledby={headingId} data-lane={lane.lane}>
      <div className="lane-head">
        <h2 id={headingId}>{LANE_LABELS[lane.lane]}</h2>
        <dl className="lane-figures">
          <div>
            <dt>Waiting</dt>
            <dd data-lane-depth>{lane.depth}</dd>
          </div>
          <div>
            <dt>Oldest wait</dt>
            <dd>{lane.depth > 0 ? waitText(lane.oldestWaitMs) : '—'}</dd>
          </div>
          <div>
            <dt>Running</dt>
            <dd>
              {running} of {capacity}
            </dd>
          </div>
          <div>
            <dt>Workers</dt>
            <dd>{lane.workers.length}</dd>
          </div>
        </dl>
      </div>
      {unserved ? (
        <p className="refusal" role="alert">
          Jobs are waiting and no worker serves this lane: start {lane.lane === 'llm' ? 'an LLM worker (worker-llm)' : 'a tool worker (worker-tool)'}.
        </p>
      ) : null}
      {lane.workers.length === 0 ? (
        unserved ? null : <EmptyState title="No worker serves this lane">Workers appear here within seconds of starting.</EmptyState>
      ) : (
        <table className="table">
          <thead>
            <HeadRow columns={COLUMNS} />
          </thead>
          <tbody>
            {lane.workers.map((w) => (
              <WorkerRow key={w.id} worker={w} now={now} waiting={lane.depth > 0} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function WorkerRow({ worker: w, now, waiting }: { worker: LaneWorkerInfo; now: number; waiting: boolean }) {
  const stuck = waiting && now - Date.parse(w.lastProgressAt) > STUCK_MS;
  return (
    <tr data-worker-id={w.id}>
      <td>
        <code>{w.host}</code> <span className="muted small">pid {w.pid}</span>
      </td>
      <td className="num">
        {w.inFlight} / {w.concurrency}
      </td>
      <td title={new Date(w.lastProgressAt).toLocaleString()}>
        {relativeTime(w.lastProgressAt, now)}
        {stuck ? <span className="badge badge-sm tone-failed lane-stuck">no progress while jobs wait</span> : null}
      </td>
      <td title={new Date(w.lastBeatAt).toLocaleString()}>{relativeTime(w.lastBeatAt, now)}</td>
      <td title={new Date(w.startedAt).toLocaleString()}>{relativeTime(w.startedAt, now)}</td>
    </tr>
  );
}
