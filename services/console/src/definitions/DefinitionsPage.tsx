/**
 * Definitions (read-only here; authoring is the editor's): name, kind, version, size, last
 * change, and "Start run" (an input dialog prefilled from the Start's `defaultInput`) or,
 * for a Chat graph, "Open chat". The open dialog is in the URL (`?start=<id>`).
 */
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { DefinitionSummary } from '@flowline/client';
import { useDefinitionPages } from '../api/queries';
import { useCan } from '../session/session';
import { EmptyState, ListTable, ShortId, Time, type Column } from '../ui/primitives';
import { StartRunDialog } from './StartRunDialog';

const route = getRouteApi('/definitions');

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Kind' },
  { label: 'Version', num: true },
  { label: 'Nodes', num: true },
  { label: 'Updated' },
  { label: 'Id' },
  { label: 'Actions', hidden: true },
];

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
          <Link to="/chat" search={{ definitionId: d.id }} className="btn btn-sm" aria-label={`Open chat of ${d.name}`}>
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
  // the start dialog is in the URL, but only a key with the run scope gets it
  const starting = search.start && canRun ? items.find((d) => d.id === search.start) : undefined;
  const now = defs.dataUpdatedAt || Date.now();
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Definitions</h1>
          <p className="muted">Saved graphs. A run pins the version it started from.</p>
        </div>
      </div>
      {search.start && !canRun ? (
        <p className="notice" role="note">
          This key cannot start runs: it lacks the run scope.
        </p>
      ) : null}
      <ListTable
        columns={COLUMNS}
        query={defs}
        refusalTitle="Could not list definitions"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={4}
        empty={
          <EmptyState title="No definitions yet">
            Create one with <code>npx flowline definitions create</code> or <code>POST /v1/definitions</code>.
          </EmptyState>
        }
      >
        {items.map((d) => (
          <Row key={d.id} d={d} canRun={canRun} now={now} />
        ))}
      </ListTable>
      {starting ? <StartRunDialog definition={starting} onClose={() => void navigate({ search: {} })} /> : null}
    </div>
  );
}
