/**
 * The approvals inbox (`/approvals`): every node of the tenant's runs that waits for a person —
 * a Pause's decision, a ChatInput's answer, an Agent's tool call, a decision held for an
 * operator — with what it asks, its run and definition, how long it has waited, and a link to
 * the run view's decision panel.
 *
 * No route lists pending decisions across runs, so this reads the runs `GET /v1/runs?status=
 * WaitingForApproval` answers, a page of 50 at a time ("Load more" for the next), and each
 * listed run's blockers (`gate` blockers are the people-waits; a run parked only on a Wait node
 * reads WaitingForApproval too and lists none). That is one call per run of the pages loaded:
 * bounded by what the person loads, not by the tenant's runs. A Pause's approval policy shows
 * each quorum's members and progress and who decided (principal, path, time).
 *
 * "Waiting for me" keeps the gates the signed-in key may still decide: a policy gate says so
 * itself (the blockers answer it for the reading key: not decided by it yet, not forbidden to
 * it, in one of its quorums); any other gate is decided by a key with the `run` scope.
 */
import { useEffect, useState } from 'react';
import { useQueries, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { Blocker, RunSummary } from '@flowline/client';
import { keys, useDefinitionIndex, useRunPages } from '../api/queries';
import { useCan, useClient } from '../session/session';
import { EmptyState, ListTable, RefusalNote, Time, durationText, useNow, type Column } from '../ui/primitives';
import { decisionKindText } from './blockers';
import { GateProgress } from './GateProgress';
import { waitsForMe } from './approval-view';

const COLUMNS: readonly Column[] = [
  { label: 'Asks for' },
  { label: 'Node' },
  { label: 'Run' },
  { label: 'Definition' },
  { label: 'Waiting' },
  { label: 'Decide', hidden: true },
];

/** Blockers are re-read this often (one call per listed run): slower than the list itself. */
const BLOCKERS_POLL_MS = 10_000;

const FILTER = { status: 'WaitingForApproval' } as const;

interface Item {
  run: RunSummary;
  gate: Blocker;
}

type Show = 'all' | 'mine';

export function ApprovalsPage() {
  const client = useClient();
  const canRun = useCan('run');
  const [show, setShow] = useState<Show>('all');
  const runs = useRunPages(FILTER);
  const defs = useDefinitionIndex();
  const now = useNow(true);
  const listed = runs.data?.pages.flatMap((p) => p.items) ?? [];
  const blockers = useQueries({
    queries: listed.map((r) => ({
      queryKey: ['run', r.id, 'blockers'],
      queryFn: () => client.runs.blockers(r.id),
      refetchInterval: BLOCKERS_POLL_MS,
      staleTime: BLOCKERS_POLL_MS / 2,
    })),
  });
  // a run of a definition created since the names were read: read them again (once per such change)
  const qc = useQueryClient();
  const unnamed = listed.some((r) => !defs.has(r.definitionId));
  useEffect(() => {
    if (unnamed) void qc.invalidateQueries({ queryKey: [...keys.definitions, 'index'] });
  }, [unnamed, qc]);
  const items: Item[] = [];
  listed.forEach((run, i) => {
    for (const b of blockers[i]?.data?.blockers ?? []) if (b.kind === 'gate') items.push({ run, gate: b });
  });
  const mine = items.filter((x) => waitsForMe(x.gate.details, canRun));
  const shown = show === 'mine' ? mine : items;
  // oldest wait first: who has waited longest is answered first
  items.sort((a, b) => Date.parse(a.gate.since ?? a.run.createdAt) - Date.parse(b.gate.since ?? b.run.createdAt));
  const reading = blockers.filter((q) => q.isPending).length;
  const refused = blockers.find((q) => q.error)?.error;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Approvals</h1>
          <p className="muted">Every run node waiting for a person, the longest waiting first. Open one to decide it.</p>
        </div>
      </div>
      <div className="segmented" role="group" aria-label="Show">
        <button type="button" className="btn btn-sm" aria-pressed={show === 'all'} onClick={() => setShow('all')}>
          All ({items.length})
        </button>
        <button type="button" className="btn btn-sm" aria-pressed={show === 'mine'} onClick={() => setShow('mine')}>
          Waiting for me ({mine.length})
        </button>
      </div>
      <RefusalNote error={refused} title="Could not read what a run waits for" />
      <ListTable
        columns={COLUMNS}
        query={{ ...runs, isPending: runs.isPending || (listed.length > 0 && reading === listed.length) }}
        refusalTitle="Could not list the runs waiting for a person"
        moreLabel="Load more runs"
        rowCount={shown.length}
        skeletonRows={3}
        empty={
          show === 'mine' ? (
            <EmptyState title="Nothing waits for you">Gates you may still decide show here: not decided by you yet, not forbidden to you, and in a quorum of yours.</EmptyState>
          ) : (
            <EmptyState title="Nothing waits for a person">Pauses, chat questions and tool calls that need a decision show here.</EmptyState>
          )
        }
      >
        {shown.map(({ run, gate }) => {
          const d = gate.details;
          return (
            <tr
              key={`${run.id}/${gate.nodeKey}`}
              data-approval-run={run.id}
              data-approval-node={gate.nodeKey}
              data-decision-kind={String(d.decisionKind ?? 'Decision')}
              data-waiting-for-me={String(waitsForMe(d, canRun))}
            >
              <td>
                <div className="cell-title">{decisionKindText(d.decisionKind)}</div>
                {typeof d.tool === 'string' ? <code className="tool-name">{d.tool}</code> : null}
                <GateProgress gate={d} />
              </td>
              <td className="mono">{gate.nodeKey}</td>
              <td className="mono">{run.id.slice(0, 8)}</td>
              <td>
                {defs.get(run.definitionId)?.name ?? <span className="mono">{run.definitionId.slice(0, 8)}</span>} <span className="muted">v{run.definitionVersion}</span>
              </td>
              <td>
                {gate.since ? (
                  <>
                    {durationText(gate.since, null, now)} <span className="muted small">(since <Time iso={gate.since} now={now} />)</span>
                  </>
                ) : (
                  '—'
                )}
              </td>
              <td>
                <Link className="btn btn-sm btn-primary" to="/run" search={{ runId: run.id, nodeKey: gate.nodeKey }} aria-label={`Decide ${gate.nodeKey} of run ${run.id.slice(0, 8)}`}>
                  Decide
                </Link>
              </td>
            </tr>
          );
        })}
      </ListTable>
      {reading > 0 && !runs.isPending ? <p className="muted small">Reading what {reading} run{reading === 1 ? '' : 's'} wait for…</p> : null}
    </div>
  );
}
