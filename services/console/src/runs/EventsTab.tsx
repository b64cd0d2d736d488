/**
 * The run's events, oldest first, paging forward from afterSeq 0, narrowed by node, kind and
 * a search text; each event's detail opens to its whole JSON. When the last page was
 * truncated the NEWEST events are the ones missing, and the banner says exactly that.
 */
import { useId, useMemo, useState } from 'react';
import type { LiveEvent } from '@flowline/client';
import { useEventPages } from '../api/queries';
import { JsonDoc } from '../ui/JsonDoc';
import { RUN_EVENTS, eventChoices, eventMatches, type EventFilter } from './event-filter';
import { clockText, gapText, Loading, RefusalNote, relativeTime } from '../ui/primitives';

function detailText(d: unknown): string {
  if (d === null || d === undefined) return '';
  if (typeof d === 'object' && Object.keys(d).length === 0) return '';
  return JSON.stringify(d);
}

/** What a view of the run's event pages says besides the events: a refusal, loading, and newer events not read yet. */
export function EventPagesNotes({ pages, shown }: { pages: ReturnType<typeof useEventPages>; shown: number }) {
  return (
    <>
      <RefusalNote error={pages.error} title="Could not read the events" />
      {pages.isPending ? <Loading label="Reading events" /> : null}
      {pages.hasNextPage ? (
        <div className="notice notice-warn replay-banner" role="status">
          Showing the first {shown} events: newer events exist and are not shown yet.{' '}
          <button type="button" className="btn btn-sm" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
            {pages.isFetchingNextPage ? 'Loading…' : 'Load newer events'}
          </button>
        </div>
      ) : null}
    </>
  );
}

/** The filter bar over the run's events: node, kind, and a search text. */
function EventFilters({ events, filter, onChange }: { events: readonly LiveEvent[]; filter: EventFilter; onChange(next: EventFilter): void }) {
  const id = useId();
  const { nodes, kinds } = useMemo(() => eventChoices(events), [events]);
  return (
    <div className="filters event-filters" role="search" aria-label="Filter events">
      <div className="field">
        <label htmlFor={`${id}-node`}>Node</label>
        <select id={`${id}-node`} value={filter.nodeKey ?? ''} onChange={(e) => onChange({ ...filter, nodeKey: e.target.value || undefined })}>
          <option value="">Any node</option>
          <option value={RUN_EVENTS}>The run itself</option>
          {nodes.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={filter.kind ?? ''} onChange={(e) => onChange({ ...filter, kind: e.target.value || undefined })}>
          <option value="">Any kind</option>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-text`}>Search events</label>
        <input id={`${id}-text`} type="search" value={filter.text ?? ''} placeholder="text in kind, node or detail" onChange={(e) => onChange({ ...filter, text: e.target.value })} />
      </div>
    </div>
  );
}

/** One event: its number, clock time, gap to the previous one, kind, node, and its detail — one line, opened to the whole JSON on demand. */
function EventRow({ e, previous }: { e: LiveEvent; previous: LiveEvent | undefined }) {
  const text = detailText(e.detail);
  return (
    <li className={`event event-${e.kind.split('.')[0]}`} data-seq={e.seq} data-kind={e.kind} data-node-key={e.nodeKey ?? undefined}>
      <span className="event-seq mono">#{e.seq}</span>
      <time className="event-at mono small" dateTime={e.at} title={`${new Date(e.at).toLocaleString()} (${relativeTime(e.at, Date.now())})`}>
        {clockText(e.at)}
      </time>
      <span className="event-gap mono small muted" title="time since the previous event">
        {previous ? gapText(previous.at, e.at) : ''}
      </span>
      <span className="event-kind">{e.kind}</span>
      <span className="event-node mono">{e.nodeKey ?? ''}</span>
      {text ? (
        <details className="event-payload">
          <summary>
            <code className="event-detail">{text}</code>
          </summary>
          <JsonDoc title={`Event #${e.seq} detail`} value={e.detail} expandAll />
        </details>
      ) : (
        <span />
      )}
    </li>
  );
}

/** The run's events with the filter bar. */
export function EventsTab({ runId, pollMs }: { runId: string; pollMs: number | false }) {
  const pages = useEventPages(runId, pollMs);
  const events: LiveEvent[] = useMemo(() => pages.data?.pages.flatMap((p) => p.events) ?? [], [pages.data]);
  const [filter, setFilter] = useState<EventFilter>({});
  const shown = useMemo(() => events.map((e, i) => ({ e, previous: events[i - 1] })).filter(({ e }) => eventMatches(e, filter)), [events, filter]);
  return (
    <div className="events">
      <EventPagesNotes pages={pages} shown={events.length} />
      <EventFilters events={events} filter={filter} onChange={setFilter} />
      {shown.length < events.length ? (
        <p className="muted small" role="status">
          {shown.length} of {events.length} events match.
        </p>
      ) : null}
      <ol className="event-list" aria-label="Events">
        {shown.map(({ e, previous }) => (
          <EventRow key={e.seq} e={e} previous={previous} />
        ))}
      </ol>
    </div>
  );
}
