/**
 * The version list of a saved definition (`GET /v1/definitions/{id}/versions`, newest
 * first, paged): each saved version with its name, size and time; choosing one opens it
 * read-only, the current one opens the definition for editing. Two versions picked in the
 * compare form open side by side in the diff view.
 */
import { useId, useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useClient } from '../session/session';
import { Loading, RefusalNote, Time } from '../ui/primitives';

interface Props {
  definitionId: string;
  /** the definition's current version */
  current: number | null;
  /** the version shown read-only, if any */
  viewing: number | null;
  onOpen(version: number): void;
  /** shows the diff between two saved versions */
  onCompare(from: number, to: number): void;
}

/** Pick two versions (default: the one before the newest, and the newest) and compare them. */
function CompareForm({ versions, onCompare }: { versions: number[]; onCompare(from: number, to: number): void }) {
  const id = useId();
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const a = from ?? versions[1] ?? null;
  const b = to ?? versions[0] ?? null;
  if (versions.length < 2 || a === null || b === null) return null;
  const options = versions.map((v) => (
    <option key={v} value={v}>
      v{v}
    </option>
  ));
  return (
    <form
      className="compare-form"
      aria-label="Compare two versions"
      onSubmit={(e) => {
        e.preventDefault();
        if (a !== b) onCompare(a, b);
      }}
    >
      <label htmlFor={`${id}-from`}>Compare</label>
      <select id={`${id}-from`} value={a} onChange={(e) => setFrom(Number(e.target.value))}>
        {options}
      </select>
      <label htmlFor={`${id}-to`}>with</label>
      <select id={`${id}-to`} value={b} onChange={(e) => setTo(Number(e.target.value))}>
        {options}
      </select>
      <button type="submit" className="btn btn-sm" disabled={a === b} title={a === b ? 'Pick two different versions' : undefined}>
        Show diff
      </button>
    </form>
  );
}

export function VersionsPanel({ definitionId, current, viewing, onOpen, onCompare }: Props) {
  const client = useClient();
  const list = useInfiniteQuery({
    queryKey: ['definitions', definitionId, 'versions', current],
    queryFn: ({ pageParam }) => client.definitions.versions(definitionId, pageParam ? { cursor: pageParam, limit: 50 } : { limit: 50 }),
    initialPageParam: '',
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <aside className="inspector versions-panel" aria-label="Versions">
      <div className="inspector-body">
        <div className="inspector-head">
          <span className="kind-chip group-graph">History</span>
          <h2>Versions</h2>
          <p className="muted small">Every save is a version. Open an old one to read it; restore it to save it again as the newest.</p>
        </div>
        {list.isPending ? <Loading label="Reading the versions" /> : null}
        <RefusalNote error={list.error} title="Could not read the versions" />
        <CompareForm versions={items.map((v) => v.version)} onCompare={onCompare} />
        <ol className="version-list">
          {items.map((v) => {
            const isCurrent = v.version === current;
            const isViewed = viewing === null ? isCurrent : v.version === viewing;
            return (
              <li key={v.version}>
                <button
                  type="button"
                  className={`version-item${isViewed ? ' is-viewed' : ''}`}
                  aria-current={isViewed ? 'true' : undefined}
                  data-version={v.version}
                  onClick={() => onOpen(v.version)}
                >
                  <span className="version-head">
                    <strong>v{v.version}</strong>
                    {isCurrent ? <span className="chip chip-accent">current</span> : null}
                    <span className="cell-title">{v.name}</span>
                  </span>
                  <span className="muted small">
                    {v.nodeCount} nodes · <Time iso={v.createdAt} />
                  </span>
                </button>
              </li>
            );
          })}
        </ol>
        {list.hasNextPage ? (
          <button type="button" className="btn btn-sm" disabled={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
            {list.isFetchingNextPage ? 'Reading…' : 'Older versions'}
          </button>
        ) : null}
      </div>
    </aside>
  );
}
