/**
 * The run's timeline: a waterfall of its nodes, from its events (`runTimeline` of
 * `@flowline/graph`). Each row is a node in the order the run reached it, its bar the spans it
 * spent queued, running (each attempt) and waiting on a person, placed on one time axis from
 * the run's first event to its last (to now while a span is open: the bars grow), with how the
 * node ended and its total time. Clicking a node's name selects it.
 */
import { useMemo } from 'react';
import { runTimeline, type TimelineSpan } from '@flowline/graph';
import type { LiveEvent } from '@flowline/client';
import { useEventPages } from '../api/queries';
import { durationText } from '../ui/primitives';
import { EventPagesNotes } from './EventsTab';

const SPAN_TEXT: Record<TimelineSpan['kind'], string> = { queued: 'queued', running: 'running', waiting: 'waiting on a person' };

export function TimelineTab(props: { runId: string; pollMs: number | false; labels: ReadonlyMap<string, string>; now: number; onSelect(key: string): void }) {
  const pages = useEventPages(props.runId, props.pollMs);
  const events: LiveEvent[] = useMemo(() => pages.data?.pages.flatMap((p) => p.events) ?? [], [pages.data]);
  const rows = useMemo(() => runTimeline(events), [events]);
  const open = rows.some((r) => r.spans.at(-1)?.to === null);
  const t0 = events.length > 0 ? Date.parse(events[0]!.at) : 0;
  const last = events.length > 0 ? Date.parse(events.at(-1)!.at) : 0;
  const t1 = Math.max(last, open ? props.now : last, t0 + 1);
  const pct = (iso: string | null) => (((iso === null ? props.now : Date.parse(iso)) - t0) / (t1 - t0)) * 100;
  return (
    <div className="timeline">
      <EventPagesNotes pages={pages} shown={events.length} />
      {rows.length > 0 ? (
        <div className="timeline-axis muted small" aria-hidden="true">
          <span>0</span>
          <span>{durationText(new Date(t0).toISOString(), new Date(t1).toISOString(), props.now)}</span>
        </div>
      ) : null}
      <ol className="timeline-rows" aria-label="Timeline">
        {rows.map((r) => {
          const first = r.spans[0]?.from ?? r.end?.at ?? null;
          const finish = r.end?.at ?? r.spans.at(-1)?.to ?? null;
          const attempts = Math.max(1, ...r.spans.map((s) => s.attempt));
          return (
            <li key={r.nodeKey} className="timeline-row" data-node-key={r.nodeKey} data-end={r.end?.status ?? 'open'}>
              <button type="button" className="timeline-node btn-link" onClick={() => props.onSelect(r.nodeKey)} title={r.nodeKey}>
                {props.labels.get(r.nodeKey) ?? r.nodeKey}
              </button>
              <div className="timeline-track">
                {r.spans.map((s, i) => {
                  const left = pct(s.from);
                  const width = Math.max(0.4, pct(s.to) - left);
                  const text = `${SPAN_TEXT[s.kind]}${attempts > 1 ? `, attempt ${s.attempt}` : ''}: ${durationText(s.from, s.to, props.now)}${s.to === null ? ' so far' : ''}`;
                  return (
                    <span
                      key={i}
                      role="img"
                      aria-label={text}
                      title={text}
                      className={`timeline-span is-${s.kind}${s.to === null ? ' is-open' : ''}`}
                      data-kind={s.kind}
                      data-attempt={s.attempt}
                      style={{ left: `${left}%`, width: `${width}%` }}
                    />
                  );
                })}
              </div>
              <span className="timeline-total mono small">
                {r.end ? r.end.status : 'in progress'} · {durationText(first, finish, props.now)}
                {attempts > 1 ? ` · ${attempts} attempts` : ''}
              </span>
            </li>
          );
        })}
      </ol>
      {rows.length > 0 ? (
        <p className="timeline-legend small muted" aria-hidden="true">
          <span className="timeline-key is-queued" /> queued <span className="timeline-key is-running" /> running <span className="timeline-key is-waiting" /> waiting on a person
        </p>
      ) : null}
    </div>
  );
}
