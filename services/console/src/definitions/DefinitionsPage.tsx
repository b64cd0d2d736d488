/**
 * Definitions (read-only here; authoring is the editor's): name, kind, version, size, last
 * change, and "Start run" (an input dialog prefilled from the Start's `defaultInput`) or,
 * for a Chat graph, "Open chat". The open dialog is in the URL (`?start=<id>`).
 */
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { DefinitionSummary } from '@flowline/client';
import { useDefinitionPages } from '../api/queries';
import { useCan } from '../session/session';
import { EmptyState, RefusalNote, ShortId, SkeletonRows, Time } from '../ui/primitives';
import { StartRunDialog } from './StartRunDialog';

const route = getRouteApi('/definitions');

function Row({ d, canRun, now }: { d: DefinitionSummary; canRun: boolean; now: number }) {
  return (
    <tr data-definition-id={d.id}>
      <td>
        <div className="cell-title">{d.name}</div>
        {d.description ? <div className="muted small clamp">{d.description}</div> : null}
      </td>
      <td>
        <span className={`chip ${d.kind === 'Chat' ? 'chip-accent' : ''}`}>{d.kind}</span>
      </td>
      <td className="num">v{d.version}</td>
      <td className="num">{d.nodeCount}</td>
      <td>
        <Time iso={d.updatedAt} now={now} />
      </td>
      <td>
        <ShortId id={d.id} />
      </td>
      <td className="actions">
        <Link to="/runs" search={{ definitionId: d.id }} className="btn btn-ghost btn-sm">
          Runs
        </Link>
        {d.kind === 'Chat' ? (
          <Link to="/chat" search={{ definitionId: d.id }} className="btn btn-sm" aria-label={`Open the chat of ${d.name}`}>
            Open chat
          </Link>
        ) : null}
        {canRun && d.kind !== 'Chat' ? (
          <Link to="/definitions" search={{ start: d.id }} className="btn btn-primary btn-sm" aria-label={`Start run of ${d.name}`}>
            Start run
          </Link>
        ) : null}
      </td>
    </tr>
  );
}

export function DefinitionsPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/definitions' });
  const defs = useDefinitionPages();
  const canRun = useCan('run');
  const items = defs.data?.pages.flatMap((p) => p.items) ?? [];
  const starting = search.start ? items.find((d) => d.id === search.start) : undefined;
  const now = defs.dataUpdatedAt || Date.now();
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Definitions</h1>
          <p className="muted">Saved graphs. A run pins the version it started from.</p>
        </div>
      </div>
      <RefusalNote error={defs.error} title="Could not list definitions" />
      <div className="card table-card">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col" className="num">
                Version
              </th>
              <th scope="col" className="num">
                Nodes
              </th>
              <th scope="col">Updated</th>
              <th scope="col">Id</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {defs.isPending ? <SkeletonRows rows={4} cols={7} /> : null}
            {items.map((d) => (
              <Row key={d.id} d={d} canRun={canRun} now={now} />
            ))}
          </tbody>
        </table>
        {!defs.isPending && items.length === 0 && !defs.error ? (
          <EmptyState title="No definitions yet">
            Create one with <code>npx flowline definitions create</code> or <code>POST /v1/definitions</code>.
          </EmptyState>
        ) : null}
      </div>
      {defs.hasNextPage ? (
        <div className="pager">
          <button type="button" className="btn" onClick={() => void defs.fetchNextPage()} disabled={defs.isFetchingNextPage}>
            {defs.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        </div>
      ) : null}
      {starting ? <StartRunDialog definition={starting} onClose={() => void navigate({ search: {} })} /> : null}
    </div>
  );
}
