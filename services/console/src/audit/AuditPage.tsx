/**
 * The tenant's audit log (`/v1/audit`, the `audit` scope): every write, refusals included, newest
 * first, filtered by principal, action, resource and time. "Verify chain" asks the server to walk
 * the hash chain and says where it breaks, if anywhere. A row not chained yet shows as pending.
 */
import { useId, useState } from 'react';
import type { AuditQuery, AuditRecord, AuditVerification } from '@flowline/client';
import { useAuditPages } from '../api/queries';
import { useClient } from '../session/session';
import { EmptyState, ListTable, RefusalNote, Time, type Column } from '../ui/primitives';

const COLUMNS: readonly Column[] = [
  { label: 'Seq' },
  { label: 'When' },
  { label: 'Principal' },
  { label: 'Action' },
  { label: 'Resource' },
  { label: 'Outcome' },
  { label: 'Request' },
];

const FIELDS = [
  { member: 'principal', label: 'Principal', placeholder: 'user:…, service:… or key:…' },
  { member: 'action', label: 'Action', placeholder: 'run.cancel or run.*' },
  { member: 'resource', label: 'Resource', placeholder: 'run or run:<id>' },
] as const;

/** A `datetime-local` value (the browser's zone) as an ISO instant; undefined when empty. */
const isoOf = (local: string): string | undefined => (local === '' ? undefined : new Date(local).toISOString());

export function AuditPage() {
  const [filter, setFilter] = useState<AuditQuery>({});
  const audit = useAuditPages(filter);
  const items = audit.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Audit log</h1>
          <p className="muted">Every write to this tenant, refused ones included, with who made it and what it answered. Rows are hash-chained.</p>
        </div>
        <VerifyChain />
      </div>
      <AuditFilters onApply={setFilter} />
      <ListTable
        columns={COLUMNS}
        query={audit}
        refusalTitle="Could not read the audit log"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={4}
        empty={<EmptyState title="No audit rows match">Writes appear here as they are made.</EmptyState>}
      >
        {items.map((r) => (
          <AuditRow key={r.seq ?? `pending-${r.requestId}`} row={r} />
        ))}
      </ListTable>
    </div>
  );
}

function AuditRow({ row }: { row: AuditRecord }) {
  const failed = row.status !== null && row.status >= 400;
  return (
    <tr data-audit-action={row.action} data-audit-seq={row.seq ?? 'pending'}>
      <td className="mono small">{row.seq ?? <span className="chip">pending</span>}</td>
      <td>
        <Time iso={row.at} />
      </td>
      <td className="mono small">{row.principal}</td>
      <td className="mono small">{row.action}</td>
      <td className="small">
        {row.resourceType}
        {row.resourceId ? <span className="mono muted"> {row.resourceId}</span> : null}
      </td>
      <td className="small">
        {row.status === null ? <span className="muted">not recorded</span> : <span className={failed ? 'chip chip-warn' : 'chip'}>{row.status}</span>}
        {row.errorCode ? <span className="muted"> {row.errorCode}</span> : null}
        {row.patch ? <span className="muted"> · {(row.patch as unknown[]).length} change(s)</span> : null}
      </td>
      <td className="mono small muted">{row.requestId}</td>
    </tr>
  );
}

function AuditFilters({ onApply }: { onApply(f: AuditQuery): void }) {
  const id = useId();
  const [text, setText] = useState({ principal: '', action: '', resource: '', from: '', to: '' });
  const apply = (next = text) => {
    const f: AuditQuery = {};
    for (const { member } of FIELDS) if (next[member].trim() !== '') f[member] = next[member].trim();
    const from = isoOf(next.from);
    const to = isoOf(next.to);
    if (from) f.from = from;
    if (to) f.to = to;
    onApply(f);
  };
  return (
    <form
      className="filters"
      aria-label="Filter the audit log"
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      {FIELDS.map((f) => (
        <div className="field" key={f.member}>
          <label htmlFor={`${id}-${f.member}`}>{f.label}</label>
          <input id={`${id}-${f.member}`} value={text[f.member]} placeholder={f.placeholder} onChange={(e) => setText({ ...text, [f.member]: e.target.value })} />
        </div>
      ))}
      <div className="field">
        <label htmlFor={`${id}-from`}>From</label>
        <input id={`${id}-from`} type="datetime-local" value={text.from} onChange={(e) => setText({ ...text, from: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-to`}>Before</label>
        <input id={`${id}-to`} type="datetime-local" value={text.to} onChange={(e) => setText({ ...text, to: e.target.value })} />
      </div>
      <button type="submit" className="btn btn-sm">
        Apply filters
      </button>
      <button
        type="button"
        className="btn btn-ghost btn-sm"
        onClick={() => {
          const empty = { principal: '', action: '', resource: '', from: '', to: '' };
          setText(empty);
          apply(empty);
        }}
      >
        Clear
      </button>
    </form>
  );
}

/** Asks the server to walk the chain; says ok or where it breaks. */
function VerifyChain() {
  const client = useClient();
  const [result, setResult] = useState<AuditVerification | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);
  return (
    <div className="verify-chain">
      <button
        type="button"
        className="btn"
        disabled={pending}
        onClick={() => {
          setPending(true);
          setError(null);
          client.audit
            .verify()
            .then(setResult, setError)
            .finally(() => setPending(false));
        }}
      >
        Verify chain
      </button>
      <RefusalNote error={error} title="Could not verify" />
      {result ? (
        <p role="status" className="small" data-verified={result.ok ? 'ok' : 'broken'}>
          {result.ok
            ? `Chain intact: ${result.checked} rows checked${result.prunedSeq > 0 ? ` from the retention checkpoint at ${result.prunedSeq}` : ''}${result.pending > 0 ? `, ${result.pending} pending` : ''}.`
            : `Chain broken at seq ${result.brokenAt} (${result.reason}).`}
        </p>
      ) : null}
    </div>
  );
}
