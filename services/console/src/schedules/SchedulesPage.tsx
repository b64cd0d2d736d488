/**
 * Schedules of the tenant (`/v1/schedules`): each with its spec, zone, policy and next slot.
 * With the `operate` scope: pause and resume; with `run`: trigger a run now. "Slots" shows the
 * next slots with their UTC offsets and the slot ledger (every slot's outcome, its run or why
 * none). Schedules are written with the API or `flowline schedules apply`.
 */
import { useState } from 'react';
import { Link } from '@tanstack/react-router';
import type { Schedule } from '@flowline/client';
import { keys, useSchedulePages, useScheduleSlots } from '../api/queries';
import { useCan } from '../session/session';
import { useKeyedAct } from '../runs/acts';
import { Dialog, DialogDone } from '../ui/Dialog';
import { EmptyState, ListTable, Loading, RefusalNote, ShortId, Time, type Column } from '../ui/primitives';

const COLUMNS: readonly Column[] = [
  { label: 'Key' },
  { label: 'When' },
  { label: 'Overlap' },
  { label: 'Next slot' },
  { label: 'State' },
  { label: 'Id' },
  { label: 'Actions', hidden: true },
];

const whenOf = (s: Schedule) => [s.spec.cron ? `cron ${s.spec.cron}` : null, s.spec.every ? `every ${s.spec.every}` : null].filter(Boolean).join(' + ');

export function SchedulesPage() {
  const schedules = useSchedulePages();
  const canOperate = useCan('operate');
  const canRun = useCan('run');
  const [shown, setShown] = useState<Schedule | null>(null);
  const pause = useKeyedAct<Schedule>(keys.schedules, (c, _op, s) => (s.paused ? c.schedules.resume(s.id) : c.schedules.pause(s.id)));
  const trigger = useKeyedAct<Schedule>(keys.schedules, (c, _op, s) => c.schedules.trigger(s.id));
  const items = schedules.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Schedules</h1>
          <p className="muted">Runs that start themselves on a cron or an interval. Every slot is recorded with what became of it.</p>
        </div>
      </div>
      <RefusalNote error={pause.error ?? trigger.error} title="Refused" />
      <ListTable
        columns={COLUMNS}
        query={schedules}
        refusalTitle="Could not list schedules"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={3}
        empty={
          <EmptyState title="No schedules yet">
            Create one with <code>POST /v1/schedules</code> or <code>flowline schedules apply</code>.
          </EmptyState>
        }
      >
        {items.map((s) => (
          <tr key={s.id} data-schedule-key={s.key}>
            <td>
              <div className="cell-title">{s.key}</div>
              <div className="muted small">
                definition <ShortId id={s.definitionId} /> · {s.version === 'current' ? 'current version' : `v${s.version}`}
              </div>
            </td>
            <td className="small mono">
              {whenOf(s)}
              <div className="muted">{s.spec.timezone}</div>
            </td>
            <td className="small">{s.policy.overlap}</td>
            <td className="small mono">{s.nextSlot ? s.nextSlot.local : <span className="muted">none</span>}</td>
            <td className="small">{s.paused ? `Paused${s.pausedReason ? `: ${s.pausedReason}` : ''}` : 'Active'}</td>
            <td>
              <ShortId id={s.id} />
            </td>
            <td className="actions">
              <button type="button" className="btn btn-sm" onClick={() => setShown(s)} aria-label={`Slots of ${s.key}`}>
                Slots
              </button>
              {canRun ? (
                <button type="button" className="btn btn-sm btn-ghost" disabled={trigger.pending} onClick={() => trigger.run(s)} aria-label={`Trigger ${s.key} now`}>
                  Trigger
                </button>
              ) : null}
              {canOperate ? (
                <button type="button" className="btn btn-sm btn-ghost" disabled={pause.pending} onClick={() => pause.run(s)} aria-label={`${s.paused ? 'Resume' : 'Pause'} ${s.key}`}>
                  {s.paused ? 'Resume' : 'Pause'}
                </button>
              ) : null}
            </td>
          </tr>
        ))}
      </ListTable>
      {shown ? <SlotsDialog schedule={shown} onClose={() => setShown(null)} /> : null}
    </div>
  );
}

/** The next slots and the ledger of one schedule. */
function SlotsDialog({ schedule, onClose }: { schedule: Schedule; onClose(): void }) {
  const { preview, ledger } = useScheduleSlots(schedule.id);
  return (
    <Dialog title={`Slots of ${schedule.key}`} onClose={onClose} wide>
      <h2 className="small">Next slots ({schedule.spec.timezone})</h2>
      {preview.isPending ? <Loading /> : null}
      <RefusalNote error={preview.error} title="Could not preview" />
      <ul className="mono small" aria-label="Next slots">
        {(preview.data?.slots ?? []).map((x) => (
          <li key={x.at}>
            {x.local} <span className="muted">({x.at})</span>
          </li>
        ))}
      </ul>
      <h2 className="small">Ledger</h2>
      {ledger.isPending ? <Loading /> : null}
      <RefusalNote error={ledger.error} title="Could not read the ledger" />
      {ledger.data && ledger.data.items.length === 0 ? <p className="muted">No slot decided yet.</p> : null}
      {ledger.data && ledger.data.items.length > 0 ? (
        <table className="table" aria-label="Slot ledger">
          <thead>
            <tr>
              <th scope="col">Slot</th>
              <th scope="col">Source</th>
              <th scope="col">Outcome</th>
              <th scope="col">Run or reason</th>
              <th scope="col">Decided</th>
            </tr>
          </thead>
          <tbody>
            {ledger.data.items.map((x) => (
              <tr key={x.slotAt} data-outcome={x.outcome}>
                <td className="mono small">{x.slotAt}</td>
                <td className="small">{x.source}</td>
                <td className="small">{x.outcome}</td>
                <td className="small">
                  {x.runId ? (
                    <Link to="/run" search={{ runId: x.runId }}>
                      <ShortId id={x.runId} />
                    </Link>
                  ) : (
                    <span className="muted">{x.reason}</span>
                  )}
                </td>
                <td>
                  <Time iso={x.decidedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <DialogDone onClose={onClose} />
    </Dialog>
  );
}
