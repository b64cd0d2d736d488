/**
 * MCP servers of the tenant (`/v1/mcp-servers`): name, transport, URL, the header names
 * (never values), allowed tools, version. With the `define` scope: register, edit (headers
 * left empty are kept), delete, and "Test connection", which lists the tools the server
 * offers now (`GET /v1/mcp-servers/{id}/tools`). Stdio servers are the deployment's and are
 * not listed here.
 */
import { useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { McpServer, McpServerBody } from '@flowline/client';
import { keys, useMcpServers } from '../api/queries';
import { useCan, useClient } from '../session/session';
import { actDialog, useKeyedAct } from '../runs/acts';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { EmptyState, ListTable, Loading, RefusalNote, Time, type Column } from '../ui/primitives';
import { DeleteDialog, Field, linesOf, RowActions, TextAreaField, TextField } from '../resources/fields';

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Transport' },
  { label: 'URL' },
  { label: 'Headers' },
  { label: 'Allowed tools' },
  { label: 'Version', num: true },
  { label: 'Updated' },
  { label: 'Actions', hidden: true },
];

function ServerForm({ server, onClose }: { server: McpServer | null; onClose(): void }) {
  const id = useId();
  const [name, setName] = useState(server?.name ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [transport, setTransport] = useState<McpServerBody['transport']>(
    server?.transport ?? 'streamable-http',
  );
  const [allowed, setAllowed] = useState((server?.allowedTools ?? []).join('\n'));
  const [timeoutMs, setTimeoutMs] = useState(server ? String(server.timeoutMs) : '');
  const headers = useJsonText('', true);
  const save = useKeyedAct(keys.mcpServers, (c, _op, body: McpServerBody) =>
    server ? c.mcpServers.update(server.id, body) : c.mcpServers.create(body),
  );
  const ends = actDialog(save, onClose);
  const timeout = timeoutMs.trim() === '' ? undefined : Number(timeoutMs);
  const valid =
    headers.parsed.ok &&
    name.trim() !== '' &&
    url.trim() !== '' &&
    (timeout === undefined || Number.isInteger(timeout));
  const storedHeaders = server
    ? `Stored: ${server.headerNames.join(', ') || 'none'}. Empty keeps them; {} clears them. Values are never shown.`
    : null;
  return (
    <Dialog title={server ? `Edit ${server.name}` : 'Register an MCP server'} onClose={ends.close} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!valid || !headers.parsed.ok) return;
          const tools = linesOf(allowed);
          ends.submit({
            name: name.trim(),
            url: url.trim(),
            transport,
            allowedTools: tools.length > 0 ? tools : null,
            ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
            ...(headers.parsed.value !== undefined
              ? { headers: headers.parsed.value as Record<string, string> }
              : {}),
          });
        }}
      >
        <div className="form-row">
          <TextField
            id={`${id}-name`}
            label="Name"
            help="Graphs name its tools mcp:NAME/TOOL."
            value={name}
            onChange={setName}
            required
          />
          <Field id={`${id}-transport`} label="Transport">
            <select
              id={`${id}-transport`}
              value={transport}
              onChange={(e) => setTransport(e.target.value as McpServerBody['transport'])}
            >
              <option value="streamable-http">streamable-http</option>
              <option value="sse">sse (HTTP+SSE, older)</option>
            </select>
          </Field>
        </div>
        <TextField
          id={`${id}-url`}
          label="URL"
          help="http(s); private addresses only for hosts in MCP_ALLOWED_HOSTS."
          value={url}
          onChange={setUrl}
          mono
          required
        />
        <div className="form-field">
          <JsonField
            id={`${id}-headers`}
            label="Headers (JSON object, optional)"
            rows={3}
            field={headers}
            help={storedHeaders ?? 'Sent on every request, sealed at rest, never shown again.'}
          />
        </div>
        <div className="form-row">
          <TextAreaField
            id={`${id}-allowed`}
            label="Allowed tools (optional)"
            help="One per line; empty allows every tool the server lists."
            rows={3}
            value={allowed}
            onChange={setAllowed}
            mono
          />
          <TextField
            id={`${id}-timeout`}
            label="Timeout per call (ms)"
            help="Default 30000."
            value={timeoutMs}
            onChange={setTimeoutMs}
            numeric
          />
        </div>
        <RefusalNote error={save.error} title="Refused" />
        <DialogActions
          back="Cancel"
          onBack={ends.close}
          act={server ? 'Save' : 'Register'}
          disabled={!valid || save.pending}
        />
      </form>
    </Dialog>
  );
}

function TestDialog({ server, onClose }: { server: McpServer; onClose(): void }) {
  const client = useClient();
  const tools = useQuery({
    queryKey: [...keys.mcpServers, server.id, 'tools'],
    queryFn: () => client.mcpServers.tools(server.id),
    retry: false,
    gcTime: 0,
  });
  return (
    <Dialog title={`Test connection: ${server.name}`} onClose={onClose} wide>
      {tools.isPending ? <Loading label="Connecting" /> : null}
      <RefusalNote error={tools.error} title="Could not list the server's tools" />
      {tools.data ? (
        <>
          <p role="status">
            Connected: {tools.data.items.length} tool{tools.data.items.length === 1 ? '' : 's'} offered.
          </p>
          {/* focusable: the list scrolls when a server offers many tools */}
          <ul className="tool-list" tabIndex={0} aria-label={`Tools of ${server.name}`}>
            {tools.data.items.map((t) => (
              <li key={t.ref}>
                <code>{t.ref}</code>
                {t.description ? <div className="muted small">{t.description}</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <div className="dialog-actions">
        <button
          type="button"
          className="btn"
          onClick={() => void tools.refetch()}
          disabled={tools.isFetching}
        >
          Test again
        </button>
        <button type="button" className="btn btn-primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

type Open = { kind: 'new' } | { kind: 'edit' | 'test' | 'delete'; server: McpServer } | null;

export function McpServersPage() {
  const servers = useMcpServers();
  const canDefine = useCan('define');
  const [open, setOpen] = useState<Open>(null);
  const items = servers.data?.items ?? [];
  const now = servers.dataUpdatedAt || Date.now();
  const close = () => setOpen(null);
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>MCP servers</h1>
          <p className="muted">
            Remote MCP servers whose tools Tool nodes and Agents may call, as mcp:SERVER/TOOL.
          </p>
        </div>
        {canDefine ? (
          <button type="button" className="btn btn-primary" onClick={() => setOpen({ kind: 'new' })}>
            Register server
          </button>
        ) : null}
      </div>
      <ListTable
        columns={COLUMNS}
        query={{ ...servers, hasNextPage: false, isFetchingNextPage: false, fetchNextPage: () => undefined }}
        refusalTitle="Could not list MCP servers"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={3}
        empty={
          <EmptyState title="No MCP servers yet">
            Register one here or with <code>POST /v1/mcp-servers</code>. The deployment&apos;s stdio servers
            are not listed.
          </EmptyState>
        }
      >
        {items.map((s) => (
          <tr key={s.id} data-server-name={s.name}>
            <td>
              <div className="cell-title mono">{s.name}</div>
            </td>
            <td className="nowrap">
              <span className="chip">{s.transport}</span>
            </td>
            <td className="mono small clamp">{s.url}</td>
            <td className="small">
              {s.headerNames.length > 0 ? s.headerNames.join(', ') : <span className="muted">none</span>}
            </td>
            <td className="small">
              {s.allowedTools ? s.allowedTools.join(', ') : <span className="muted">all listed</span>}
            </td>
            <td className="num">v{s.version}</td>
            <td>
              <Time iso={s.updatedAt} now={now} />
            </td>
            <RowActions
              name={s.name}
              canDefine={canDefine}
              actions={[
                {
                  label: 'Test connection',
                  main: true,
                  ariaLabel: `Test connection to ${s.name}`,
                  onClick: () => setOpen({ kind: 'test', server: s }),
                },
                { label: 'Edit', defines: true, onClick: () => setOpen({ kind: 'edit', server: s }) },
                { label: 'Delete', defines: true, onClick: () => setOpen({ kind: 'delete', server: s }) },
              ]}
            />
          </tr>
        ))}
      </ListTable>
      {open?.kind === 'new' ? <ServerForm server={null} onClose={close} /> : null}
      {open?.kind === 'edit' ? <ServerForm server={open.server} onClose={close} /> : null}
      {open?.kind === 'test' ? <TestDialog server={open.server} onClose={close} /> : null}
      {open?.kind === 'delete' ? (
        <DeleteDialog
          name={open.server.name}
          queryKey={keys.mcpServers}
          remove={(c) => c.mcpServers.delete(open.server.id)}
          onClose={close}
        >
          Definitions naming its tools stay saved; starting one then fails until a server of this name exists
          again.
        </DeleteDialog>
      ) : null}
    </div>
  );
}
