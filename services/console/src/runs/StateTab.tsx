/**
 * The run view's State tab: the run state now, and its history — each `state.updated`
 * event (a node's commit that wrote state) with the state as of it and what that node
 * changed (each key before → after, compared here from the state as of the event before).
 * The state now and the event list follow the run's other queries (live channel, or the
 * poll while it is down); a state as of an event never changes, so it is read once.
 */
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../session/session';
import { useEventPages } from '../api/queries';
import { JsonDoc } from '../ui/JsonDoc';
import { EmptyState, Loading, RefusalNote } from '../ui/primitives';
import { graphKeepsState, stateDiff, stateUpdates, type StateUpdate } from './state-history';

const compact = (v: unknown): string => (v === undefined ? '—' : JSON.stringify(v));

/** The state as of event `seq`, read once: a past state never changes. */
function useStateAt(runId: string, seq: number | undefined) {
  const client = useClient();
  return useQuery({
    // rooted outside ['run', runId] so the run's live re-reads leave these alone
    queryKey: ['run-state-at', runId, seq ?? -1],
    queryFn: () => client.runs.state(runId, { atSeq: seq! }),
    enabled: seq !== undefined,
    staleTime: Infinity,
  });
}

function ChangeTable({ update, before, after }: { update: StateUpdate; before: Record<string, unknown>; after: Record<string, unknown> }) {
  const changes = stateDiff(before, after);
  const who = update.nodeKey ?? 'the run';
  if (changes.length === 0) {
    return <p className="muted">{who} wrote {update.keys.join(', ')} and left every value as it was.</p>;
  }
  return (
    <table className="table table-compact state-diff" aria-label={`What ${who} changed`}>
      <caption>
        What <span className="mono">{who}</span> changed
      </caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.key} data-state-key={c.key} data-change={c.change}>
            <td>
              <span className="mono">{c.key}</span> <span className="chip">{c.change}</span>
            </td>
            <td>
              <code className="state-value">{compact(c.before)}</code>
            </td>
            <td>
              <code className="state-value">{compact(c.after)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function UpdateDetail({ runId, update }: { runId: string; update: StateUpdate }) {
  const after = useStateAt(runId, update.seq);
  const before = useStateAt(runId, update.seq - 1);
  if (after.error || before.error) return <RefusalNote error={after.error ?? before.error} title="Could not read the state at that event" />;
  if (!after.data || !before.data) return <Loading label={`Reading the state as of #${update.seq}`} />;
  return (
    <div className="state-at" data-state-at={update.seq}>
      <ChangeTable update={update} before={before.data.state} after={after.data.state} />
      <JsonDoc title={`State as of #${update.seq}`} value={after.data.state} expandAll />
    </div>
  );
}

export function StateTab({ runId, graph, pollMs, seq, onPick }: { runId: string; graph: unknown; pollMs: number | false; seq: number | undefined; onPick(seq: number | undefined): void }) {
  const client = useClient();
  const keeps = graphKeepsState(graph);
  const now = useQuery({ queryKey: ['run', runId, 'state'], queryFn: () => client.runs.state(runId), refetchInterval: pollMs, enabled: keeps });
  const pages = useEventPages(keeps ? runId : undefined, pollMs);
  if (!keeps) {
    return (
      <EmptyState title="This graph keeps no run state">
        Its graph declares no <code>state</code>, no node <code>writes</code> and no condition reads <code>state.…</code>.
      </EmptyState>
    );
  }
  const updates = stateUpdates(pages.data?.pages.flatMap((p) => p.events) ?? []);
  const picked = updates.find((u) => u.seq === seq);
  return (
    <div className="state-tab">
      <RefusalNote error={now.error} title="Could not read the run state" />
      <RefusalNote error={pages.error} title="Could not read the events" />
      <section className="state-now" aria-labelledby="state-now-title">
        <h2 id="state-now-title" className="section-title">
          State now {now.data ? <span className="muted small">as of #{now.data.seq}</span> : null}
        </h2>
        {now.isPending ? <Loading label="Reading the run state" /> : now.data ? <JsonDoc title="Run state" value={now.data.state} expandAll /> : null}
      </section>
      <section className="state-history" aria-labelledby="state-history-title">
        <h2 id="state-history-title" className="section-title">
          Changes <span className="muted small">{updates.length} state.updated events</span>
        </h2>
        {pages.hasNextPage ? (
          <div className="notice notice-warn" role="status">
            Only the first events are read: later changes exist.{' '}
            <button type="button" className="btn btn-sm" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
              {pages.isFetchingNextPage ? 'Loading…' : 'Load newer events'}
            </button>
          </div>
        ) : null}
        {pages.isPending ? <Loading label="Reading events" /> : null}
        {!pages.isPending && updates.length === 0 ? <p className="muted">No node has written state yet.</p> : null}
        <div className="state-history-body">
          <ol className="state-updates" aria-label="State changes">
            {updates.map((u) => (
              <li key={u.seq}>
                <button
                  type="button"
                  className={`state-update${u.seq === seq ? ' is-active' : ''}`}
                  aria-pressed={u.seq === seq}
                  data-state-seq={u.seq}
                  onClick={() => onPick(u.seq === seq ? undefined : u.seq)}
                >
                  <span className="mono">#{u.seq}</span> <span className="mono state-update-node">{u.nodeKey ?? 'run'}</span>{' '}
                  <span className="muted">{u.keys.join(', ')}</span>
                </button>
              </li>
            ))}
          </ol>
          <div className="state-history-detail">
            {picked ? <UpdateDetail runId={runId} update={picked} /> : updates.length > 0 ? <p className="muted">Pick a change to see the state as of it and what its node changed.</p> : null}
          </div>
        </div>
      </section>
    </div>
  );
}
