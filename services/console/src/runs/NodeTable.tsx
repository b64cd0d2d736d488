/**
 * The node runs of a run, in the pinned document's order; a row's button selects its node.
 * Rows are memoised on what they show: a status change re-renders one row, and the table
 * holds no router link per row (each would re-render on every URL change). A long table
 * (more than {@link WINDOW_FROM} rows) draws only the rows in its scroll box's view, plus
 * a margin: every row is one line of a fixed height, the rest are spacers, so a 200-node
 * run lays out a few dozen rows instead of 200 (`aria-rowcount` / `aria-rowindex` tell
 * assistive technology the whole).
 */
import { memo, useLayoutEffect, useRef, useState } from 'react';
import type { NodeRunSummary } from '@flowline/client';
import { StatusBadge } from '../ui/status';
import { HeadRow, durationText, type Column } from '../ui/primitives';
import { KIND_GLYPH } from '../ui/kinds';

/** Tables longer than this are windowed. */
export const WINDOW_FROM = 60;
/** A windowed row's height in px (`.node-table.is-windowed tr` in styles.css). */
export const ROW_HEIGHT = 36;
/** Rows drawn beyond each edge of the view. */
const COLUMNS: readonly Column[] = [
  { label: 'Node' },
  { label: 'Kind' },
  { label: 'Status' },
  { label: 'Attempt', num: true },
  { label: 'Duration', num: true },
  { label: 'Reason' },
];

const OVERSCAN = 8;
/** Rows drawn before the scroll box is measured. */
const FIRST_ROWS = 24;

function scrollBox(el: HTMLElement): HTMLElement | null {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowY;
    if (o === 'auto' || o === 'scroll') return p;
  }
  return null;
}

/** The rows `[start, end)` a windowed table draws for a scroll box showing `viewTop`..`viewTop + height` of its body. */
export function visibleRows(count: number, viewTop: number, height: number): { start: number; end: number } {
  const start = Math.max(0, Math.min(count, Math.floor(viewTop / ROW_HEIGHT) - OVERSCAN));
  const end = Math.max(start, Math.min(count, Math.ceil((viewTop + height) / ROW_HEIGHT) + OVERSCAN));
  return { start, end };
}

const Row = memo(function Row({ n, index, label, selected, now, onSelect }: { n: NodeRunSummary; index: number; label: string | undefined; selected: boolean; now: number; onSelect(key: string): void }) {
  return (
    <tr data-node-key={n.nodeKey} data-status={n.status} aria-rowindex={index + 2} className={selected ? 'is-selected' : undefined}>
      <td>
        <button type="button" className="link-button row-link" aria-pressed={selected} onClick={() => onSelect(n.nodeKey)}>
          {label ?? n.nodeKey}
        </button>
        {label && label !== n.nodeKey ? <span className="mono muted small"> {n.nodeKey}</span> : null}
      </td>
      <td>
        <span aria-hidden="true" className="muted">
          {KIND_GLYPH[n.kind] ?? '•'}{' '}
        </span>
        {n.kind}
      </td>
      <td>
        <StatusBadge status={n.status} size="sm" />
      </td>
      <td className="num">{n.attempt}</td>
      <td className="num">{durationText(n.startedAt, n.finishedAt, now)}</td>
      <td className="small wrap" title={n.reason ?? undefined}>
        {n.reusedFrom ? (
          <span className="chip" title={`reused from run ${n.reusedFrom}: not run again in this fork`} data-reused-from={n.reusedFrom}>
            reused
          </span>
        ) : null}
        {n.failureClass !== 'None' ? <span className="failure">{n.failureClass}</span> : null} {n.reason ?? ''}
      </td>
    </tr>
  );
});

/** Memoised on its props, as the rows are: the run page renders again as each of its reads lands. */
export const NodeTable = memo(function NodeTable({ nodeRuns, labels, selected, now, onSelect }: { nodeRuns: readonly NodeRunSummary[]; labels: ReadonlyMap<string, string>; selected?: string | undefined; now: number; onSelect(key: string): void }) {
  const windowed = nodeRuns.length > WINDOW_FROM;
  const body = useRef<HTMLTableSectionElement>(null);
  const [range, setRange] = useState(() => ({ start: 0, end: Math.min(nodeRuns.length, FIRST_ROWS) }));
  const count = nodeRuns.length;
  useLayoutEffect(() => {
    const el = body.current;
    if (!windowed || !el) return;
    const box = scrollBox(el);
    const update = () => {
      const boxTop = box ? box.getBoundingClientRect().top : 0;
      const height = box ? box.clientHeight : window.innerHeight;
      const next = visibleRows(count, boxTop - el.getBoundingClientRect().top, height);
      setRange((prev) => (prev.start === next.start && prev.end === next.end ? prev : next));
    };
    update();
    const target: HTMLElement | Window = box ?? window;
    target.addEventListener('scroll', update, { passive: true });
    window.addEventListener('resize', update);
    return () => {
      target.removeEventListener('scroll', update);
      window.removeEventListener('resize', update);
    };
  }, [windowed, count]);
  const { start, end } = windowed ? { start: Math.min(range.start, count), end: Math.min(range.end, count) } : { start: 0, end: count };
  return (
    <table className={`table table-compact node-table${windowed ? ' is-windowed' : ''}`} aria-rowcount={count + 1}>
      {windowed ? (
        <colgroup>
          <col style={{ width: '27%' }} />
          <col style={{ width: '13%' }} />
          <col style={{ width: '17%' }} />
          <col style={{ width: '8%' }} />
          <col style={{ width: '10%' }} />
          <col style={{ width: '25%' }} />
        </colgroup>
      ) : null}
      <thead>
        <HeadRow columns={COLUMNS} rowIndex={1} />
      </thead>
      <tbody ref={body}>
        {start > 0 ? <tr aria-hidden="true" className="row-spacer" style={{ height: start * ROW_HEIGHT }} /> : null}
        {nodeRuns.slice(start, end).map((n, i) => (
          <Row key={n.nodeKey} n={n} index={start + i} label={labels.get(n.nodeKey)} selected={selected === n.nodeKey} now={n.finishedAt ? 0 : now} onSelect={onSelect} />
        ))}
        {end < count ? <tr aria-hidden="true" className="row-spacer" style={{ height: (count - end) * ROW_HEIGHT }} /> : null}
      </tbody>
    </table>
  );
});
