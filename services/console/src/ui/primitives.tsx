/** Small building blocks shared by every page: refusals, empty and loading states, times, ids. */
import { useEffect, useState, type ReactNode } from 'react';
import { refusalDetailLines, refusalOf } from '../api/refusal';

/** A refusal, shown as the API said it: `code: message`. Never swallowed, always announced. */
export function RefusalNote({ error, title }: { error: unknown; title?: string }) {
  if (error === null || error === undefined) return null;
  const r = refusalOf(error);
  // the API's per-member reasons (a schema's errors, say) say what to change
  const details = refusalDetailLines(error);
  return (
    <div className="refusal" role="alert">
      {title ? <strong className="refusal-title">{title}</strong> : null}
      <code className="refusal-code">{r.code}</code>
      <span className="refusal-message">{r.message}</span>
      {details.length > 0 ? (
        <ul className="refusal-details">
          {details.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A calm "nothing here" block. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <div className="empty-mark" aria-hidden="true" />
      <p className="empty-title">{title}</p>
      {children ? <div className="empty-body">{children}</div> : null}
    </div>
  );
}

/** Loading placeholder with a polite announcement. */
export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}…
    </div>
  );
}

/** Skeleton rows for a table that is loading (no layout jump when data lands). */
export function SkeletonRows({ rows, cols }: { rows: number; cols: number }) {
  return (
    <>
      {Array.from({ length: rows }, (_, r) => (
        <tr key={r} className="skeleton-row" aria-hidden="true">
          {Array.from({ length: cols }, (_, c) => (
            <td key={c}>
              <span className="skeleton" />
            </td>
          ))}
        </tr>
      ))}
    </>
  );
}

const rtf = typeof Intl !== 'undefined' ? new Intl.RelativeTimeFormat('en', { numeric: 'auto' }) : null;

/** "3 min ago"-style text of an ISO time relative to `now` (ms). */
export function relativeTime(iso: string, now: number): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(s);
  if (!rtf) return iso;
  if (abs < 45) return rtf.format(s, 'second');
  if (abs < 45 * 60) return rtf.format(Math.round(s / 60), 'minute');
  if (abs < 22 * 3600) return rtf.format(Math.round(s / 3600), 'hour');
  return rtf.format(Math.round(s / 86400), 'day');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The local wall-clock time of an ISO time to the millisecond, "14:03:07.984". Built from the
 * date's own fields: Intl's `fractionalSecondDigits` given alone prints the milliseconds and
 * drops the hours, minutes and seconds.
 */
export function clockText(iso: string): string {
  const d = new Date(iso);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** The gap between two ISO times as "+850 ms", "+12.4 s", "+3 min 5 s". */
export function gapText(fromIso: string, toIso: string): string {
  return `+${durationText(fromIso, toIso, 0)}`;
}

/**
 * The time now, advanced every `everyMs` while `ticking`: the durations and "ago" texts of a
 * live run move between its events instead of standing still until the next one.
 */
export function useNow(ticking: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [ticking, everyMs]);
  return now;
}

/** A time: relative text, absolute in the tooltip and the `dateTime`. */
export function Time({ iso, now = Date.now() }: { iso: string | null; now?: number }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {relativeTime(iso, now)}
    </time>
  );
}

/** Duration between two ISO times (to `now` while running): "850 ms", "12.4 s", "3 min 5 s". */
export function durationText(from: string | null, to: string | null, now: number): string {
  if (!from) return '—';
  const ms = Math.max(0, (to ? Date.parse(to) : now) - Date.parse(from));
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A button copying `text`, named "Copy `label`"; a tick shows for a moment once copied. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="icon-button"
      aria-label={`Copy ${label}`}
      onClick={(e) => {
        // inside a clickable row or a link: copying selects nothing else
        e.stopPropagation();
        e.preventDefault();
        void navigator.clipboard?.writeText(text).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1200);
        });
      }}
    >
      {copied ? '✓' : <CopyIcon />}
    </button>
  );
}

/** A uuid shown short, whole in the tooltip, copyable. */
export function ShortId({ id }: { id: string }) {
  return (
    <span className="short-id">
      <code title={id}>{id.slice(0, 8)}</code>
      <CopyButton text={id} label={id} />
    </span>
  );
}

/** Two overlapping sheets (drawn, so it does not depend on the fonts installed). */
export function CopyIcon() {
  return (
    <svg width="12" height="12" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <path d="M3.5 11H3a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1h7a1 1 0 0 1 1 1v.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

/**
 * A column of a table's head row: its label, `num` for a right-aligned figure column, `hidden`
 * for a label only screen readers read (a column of buttons).
 */
export interface Column {
  label: string;
  num?: boolean;
  hidden?: boolean;
}

/** A table's head row (scoped header cells; figure columns right-aligned like their cells). */
export function HeadRow({ columns, rowIndex }: { columns: readonly Column[]; rowIndex?: number }) {
  return (
    <tr aria-rowindex={rowIndex}>
      {columns.map((c) => (
        <th key={c.label} scope="col" className={c.num ? 'num' : undefined}>
          {c.hidden ? <span className="visually-hidden">{c.label}</span> : c.label}
        </th>
      ))}
    </tr>
  );
}

/** The pager of an infinite query: a button that fetches the next page, shown while there is one. */
export function LoadMore({
  query,
  label,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  label: string;
}) {
  if (!query.hasNextPage) return null;
  return (
    <div className="pager">
      <button type="button" className="btn" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
        {query.isFetchingNextPage ? 'Loading…' : label}
      </button>
    </div>
  );
}

/**
 * A page's list of records: the refusal of its query, if any, above a card holding the table
 * (head row, skeleton rows while the first page loads, then the rows) and, once a page answered
 * with nothing, the empty state; below it the "load more" button while there is a next page. A
 * refused query shows its refusal and never the empty state, so an error is never taken for
 * "nothing here".
 */
export function ListTable({
  columns,
  query,
  refusalTitle,
  moreLabel,
  rowCount,
  skeletonRows,
  empty,
  children,
}: {
  columns: readonly Column[];
  query: { isPending: boolean; error: unknown } & Parameters<typeof LoadMore>[0]['query'];
  /** what the refusal note says was refused ("Could not list runs") */
  refusalTitle: string;
  /** the label of the button that loads the next page */
  moreLabel: string;
  rowCount: number;
  skeletonRows: number;
  empty: ReactNode;
  children: ReactNode;
}) {
  return (
    <>
      <RefusalNote error={query.error} title={refusalTitle} />
      <div className="card table-card">
        <table className="table">
          <thead>
            <HeadRow columns={columns} />
          </thead>
          <tbody>
            {query.isPending ? <SkeletonRows rows={skeletonRows} cols={columns.length} /> : null}
            {children}
          </tbody>
        </table>
        {!query.isPending && rowCount === 0 && !query.error ? empty : null}
      </div>
      <LoadMore query={query} label={moreLabel} />
    </>
  );
}

/** The head of a side panel: what it shows (the children), and its close button. */
export function SideHead({ closeLabel, onClose, children }: { closeLabel: string; onClose(): void; children: ReactNode }) {
  return (
    <div className="side-head">
      <div>{children}</div>
      <button type="button" className="icon-button" aria-label={closeLabel} onClick={onClose}>
        ✕
      </button>
    </div>
  );
}
