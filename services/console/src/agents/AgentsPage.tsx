/**
 * Saved agents of the tenant (`/v1/agents`): the members of an Agent node under a name, which
 * graphs use with `agentDefinitionId`. With the `define` scope: create, edit (every save is a
 * new version; runs already started keep theirs) and delete; "History" shows every version
 * and its members.
 */
import { useState } from 'react';
import type { SavedAgent } from '@flowline/client';
import { keys, useAgentPages } from '../api/queries';
import { useCan } from '../session/session';
import { EmptyState, ListTable, ShortId, Time, type Column } from '../ui/primitives';
import { DeleteDialog, RowActions } from '../resources/fields';
import { AgentForm, AgentHistory } from './AgentDialogs';

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Model' },
  { label: 'Tools' },
  { label: 'Version', num: true },
  { label: 'Updated' },
  { label: 'Id' },
  { label: 'Actions', hidden: true },
];

type Open = { kind: 'new' } | { kind: 'edit' | 'history' | 'delete'; agent: SavedAgent } | null;

export function AgentsPage() {
  const agents = useAgentPages();
  const canDefine = useCan('define');
  const [open, setOpen] = useState<Open>(null);
  const items = agents.data?.pages.flatMap((p) => p.items) ?? [];
  const now = agents.dataUpdatedAt || Date.now();
  const close = () => setOpen(null);
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Agents</h1>
          <p className="muted">
            Saved Agent settings that graphs share. A run pins the version it started with.
          </p>
        </div>
        {canDefine ? (
          <button type="button" className="btn btn-primary" onClick={() => setOpen({ kind: 'new' })}>
            New agent
          </button>
        ) : null}
      </div>
      <ListTable
        columns={COLUMNS}
        query={agents}
        refusalTitle="Could not list agents"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={3}
        empty={
          <EmptyState title="No saved agents yet">
            Create one here or with <code>POST /v1/agents</code>, then pick it in an Agent node.
          </EmptyState>
        }
      >
        {items.map((a) => (
          <tr key={a.id} data-agent-name={a.name}>
            <td>
              <div className="cell-title">{a.name}</div>
              <div className="muted small clamp">{a.instructions}</div>
            </td>
            <td className="small">{a.model ?? <span className="muted">deployment default</span>}</td>
            <td className="small mono">
              {a.tools.length > 0 ? a.tools.join(', ') : <span className="muted">none</span>}
            </td>
            <td className="num">v{a.version}</td>
            <td>
              <Time iso={a.updatedAt} now={now} />
            </td>
            <td>
              <ShortId id={a.id} />
            </td>
            <RowActions
              name={a.name}
              canDefine={canDefine}
              actions={[
                {
                  label: 'History',
                  ariaLabel: `History of ${a.name}`,
                  onClick: () => setOpen({ kind: 'history', agent: a }),
                },
                {
                  label: 'Edit',
                  main: true,
                  defines: true,
                  onClick: () => setOpen({ kind: 'edit', agent: a }),
                },
                { label: 'Delete', defines: true, onClick: () => setOpen({ kind: 'delete', agent: a }) },
              ]}
            />
          </tr>
        ))}
      </ListTable>
      {open?.kind === 'new' ? <AgentForm agent={null} onClose={close} /> : null}
      {open?.kind === 'edit' ? <AgentForm agent={open.agent} onClose={close} /> : null}
      {open?.kind === 'history' ? <AgentHistory agent={open.agent} onClose={close} /> : null}
      {open?.kind === 'delete' ? (
        <DeleteDialog
          name={open.agent.name}
          queryKey={keys.agents}
          remove={(c) => c.agents.delete(open.agent.id)}
          onClose={close}
        >
          Every version goes. Definitions naming it stay saved, but their runs can no longer start.
        </DeleteDialog>
      ) : null}
    </div>
  );
}
