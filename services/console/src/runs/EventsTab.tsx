/**
 * The run's events, oldest first, paging forward from afterSeq 0. When the last page was
 * truncated the NEWEST events are the ones missing, and the banner says exactly that.
 */
import type { LiveEvent } from '@flowline/client';
import { useEventPages } from '../api/queries';
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

export function EventsTab({ runId, pollMs }: { runId: string; pollMs: number | false }) {
  const pages = useEventPages(runId, pollMs);
  const events: LiveEvent[] = pages.data?.pages.flatMap((p) => p.events) ?? [];
  return (
    <div className="events">
      <EventPagesNotes pages={pages} shown={events.length} />
      <ol className="event-list" aria-label="Events">
        {events.map((e, i) => (
          <li key={e.seq} className={`event event-${e.kind.split('.')[0]}`} data-seq={e.seq} data-kind={e.kind}>
            <span className="event-seq mono">#{e.seq}</span>
            <time className="event-at mono small" dateTime={e.at} title={`${new Date(e.at).toLocaleString()} (${relativeTime(e.at, Date.now())})`}>
              {clockText(e.at)}
            </time>
            <span className="event-gap mono small muted" title="time since the previous event">
              {i > 0 ? gapText(events[i - 1]!.at, e.at) : ''}
            </span>
            <span className="event-kind">{e.kind}</span>
            <span className="event-node mono">{e.nodeKey ?? ''}</span>
            <code className="event-detail">{detailText(e.detail)}</code>
          </li>
        ))}
      </ol>
    </div>
  );
}
