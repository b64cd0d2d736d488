/**
 * The runs list: newest first, filtered by status, definition, conversation, the days created
 * and a search text the server answers (`q`: a run id, an id prefix, or text in the definition's
 * name, the reason or the metadata; sent once typing pauses; all in the URL; a full run id offers that run), keyset pages ("Load older"), and live: the list re-reads every 3 s while visible
 * (one indexed query whatever the number of runs; it also shows new runs, which per-run
 * subscriptions would not), so a run changing status updates its row without a reload.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { RunSummary } from '@flowline/client';
import { FAILURE_CLASSES as ALL_FAILURE_CLASSES, RUN_STATUSES } from '@flowline/graph';
import { parseMetadataPair, type RunsSearch } from '../app/search';
import { useDefinitionIndex, useRunPages } from '../api/queries';
import { useCan } from '../session/session';
import { StatusBadge, TERMINAL_RUN_STATUSES } from '../ui/status';
import { EmptyState, ListTable, ShortId, Time, durationText, useNow, type Column } from '../ui/primitives';
import { BulkDialog } from './BulkDialog';
import { bulkFilterOf } from './bulk';

const route = getRouteApi('/runs');

const COLUMNS: readonly Column[] = [
  { label: 'Status' },
  { label: 'Run' },
  { label: 'Definition' },
  { label: 'Created' },
  { label: 'Duration', num: true },
  { label: 'Notes' },
];

const STATUSES = RUN_STATUSES;
// the classes a run or node can end with ('None' is the absence of one)
const FAILURE_CLASSES = ALL_FAILURE_CLASSES.filter((f) => f !== 'None');

/** One filter's select: "any" (no filter) first, then its values. */
function FilterSelect(props: {
  id: string;
  label: string;
  any: string;
  value: string | undefined;
  options: readonly { value: string; label: string }[];
  onChange(value: string | undefined): void;
}) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value ?? ''} onChange={(e) => props.onChange(e.target.value || undefined)}>
        <option value="">{props.any}</option>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

function isFiltered(s: RunsSearch): boolean {
  return !!(s.status || s.definitionId || s.conversationId || s.failureClass || (s.metadata?.length ?? 0) > 0 || s.q || s.from || s.to);
}

/** How long typing pauses before the search text is sent. */
export const SEARCH_DEBOUNCE_MS = 300;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The metadata filter: `key:value` pairs as removable chips; Enter adds the typed pair. */
function MetadataFilter({ pairs, onChange, id }: { pairs: string[]; onChange(next: string[]): void; id: string }) {
  const [text, setText] = useState('');
  const [bad, setBad] = useState(false);
  const add = () => {
    const t = text.trim();
    if (!t) return;
    if (!parseMetadataPair(t)) return setBad(true);
    setBad(false);
    setText('');
    if (!pairs.includes(t)) onChange([...pairs, t]);
  };
  return (
    <div className="field">
      <label htmlFor={id}>Metadata</label>
      <div className="chip-input">
        {pairs.map((p) => (
          <span key={p} className="chip" data-metadata-filter={p}>
            {p}
            <button type="button" className="chip-remove" aria-label={`Remove filter ${p}`} onClick={() => onChange(pairs.filter((x) => x !== p))}>
              ×
            </button>
          </span>
        ))}
        <input
          id={id}
          value={text}
          placeholder="key:value ⏎"
          aria-invalid={bad || undefined}
          aria-describedby={bad ? `${id}-bad` : undefined}
          onChange={(e) => {
            setText(e.target.value);
            setBad(false);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
          onBlur={add}
        />
      </div>
      {bad ? (
        <span id={`${id}-bad`} className="field-error" role="alert">
          Write a pair as key:value
        </span>
      ) : null}
    </div>
  );
}

function Filters({ search }: { search: RunsSearch }) {
  const navigate = useNavigate({ from: '/runs' });
  const defs = useDefinitionIndex();
  const [conversation, setConversation] = useState(search.conversationId ?? '');
  const [text, setText] = useState(search.q ?? '');
  const id = useId();
  // the server searches: the typed text becomes the URL's q (and a request) once typing pauses;
  // a q changed from elsewhere (clearing the filters, going back) replaces the typed text
  const typed = text.trim() || undefined;
  const sent = useRef(search.q);
  useEffect(() => {
    if (search.q === sent.current) return;
    sent.current = search.q;
    setText(search.q ?? '');
  }, [search.q]);
  useEffect(() => {
    if (typed === search.q) return;
    const t = setTimeout(() => {
      sent.current = typed;
      set({ q: typed }, true);
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `set` is rebuilt each render; the text and the URL's q decide
  }, [typed, search.q]);
  // typing a search replaces the history entry instead of pushing one per keystroke
  const set = (patch: Partial<RunsSearch>, replace = false) =>
    void navigate({
      replace,
      search: (prev) => Object.fromEntries(Object.entries({ ...prev, ...patch }).filter(([, v]) => (Array.isArray(v) ? v.length > 0 : v))) as RunsSearch,
    });
  /** The id, value and change of the select over one search member. */
  const selectOver = (member: 'status' | 'definitionId' | 'failureClass') => ({
    id: `${id}-${member}`,
    value: search[member],
    onChange: (value: string | undefined) => set({ [member]: value }),
  });
  return (
    <form
      className="filters"
      aria-label="Filter runs"
      onSubmit={(e) => {
        e.preventDefault();
        sent.current = typed;
        set({ conversationId: conversation.trim() || undefined, q: typed });
      }}
    >
      <div className="field field-search">
        <label htmlFor={`${id}-q`}>Search</label>
        <input
          id={`${id}-q`}
          type="search"
          value={text}
          placeholder="run id, definition, reason, key:value"
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-from`}>Created from</label>
        <input id={`${id}-from`} type="date" value={search.from ?? ''} max={search.to} onChange={(e) => set({ from: e.target.value || undefined })} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-to`}>to</label>
        <input id={`${id}-to`} type="date" value={search.to ?? ''} min={search.from} onChange={(e) => set({ to: e.target.value || undefined })} />
      </div>
      <FilterSelect
        {...selectOver('status')}
        label="Status"
        any="Any status"
        options={STATUSES.map((s) => ({ value: s, label: s === 'WaitingForApproval' ? 'Waiting for approval' : s }))}
      />
      <FilterSelect {...selectOver('definitionId')} label="Definition" any="Any definition" options={[...defs.values()].map((d) => ({ value: d.id, label: d.name }))} />
      <FilterSelect {...selectOver('failureClass')} label="Failure" any="Any failure" options={FAILURE_CLASSES.map((f) => ({ value: f, label: f }))} />
      <MetadataFilter id={`${id}-meta`} pairs={search.metadata ?? []} onChange={(metadata) => set({ metadata })} />
      <div className="field">
        <label htmlFor={`${id}-conv`}>Conversation</label>
        <input
          id={`${id}-conv`}
          value={conversation}
          placeholder="conversation id"
          onChange={(e) => setConversation(e.target.value)}
          onBlur={() => set({ conversationId: conversation.trim() || undefined })}
        />
      </div>
      {isFiltered(search) ? (
        <button
          type="button"
          className="btn btn-ghost btn-sm"
          onClick={() => {
            setConversation('');
            setText('');
            void navigate({ search: {} });
          }}
        >
          Clear filters
        </button>
      ) : null}
    </form>
  );
}

function RunRow({ run, definitionName, now }: { run: RunSummary; definitionName: string | undefined; now: number }) {
  return (
    <tr data-run-id={run.id} data-status={run.status}>
      <td>
        <StatusBadge status={run.status} size="sm" />
        {run.paused ? <span className="chip chip-warn">paused</span> : null}
      </td>
      <td>
        <Link to="/run" search={{ runId: run.id }} className="row-link mono">
          {run.id.slice(0, 8)}
        </Link>
        <span className="visually-hidden"> run {run.id}</span>
      </td>
      <td>{definitionName ?? <span className="mono muted">{run.definitionId.slice(0, 8)}</span>}</td>
      <td>
        <Time iso={run.createdAt} now={now} />
      </td>
      <td className="num">{durationText(run.startedAt, run.finishedAt, now)}</td>
      <td className="muted small">
        {run.conversationId ? <span title="conversation">✉ {run.conversationId}</span> : null}
        {run.parentRunId ? (
          <span title="child of">
            ↳ <ShortId id={run.parentRunId} />
          </span>
        ) : null}
        {/* the failure class where the status does not already say it (a Cancelled run's is Cancelled), then why */}
        {run.failureClass !== 'None' && run.failureClass !== run.status ? <span className="failure">{run.failureClass}</span> : null}
        {run.reason ? <span className="run-reason"> {run.reason}</span> : null}
        {Object.entries(run.metadata ?? {}).map(([k, v]) => (
          <span key={k} className="chip chip-meta" title="metadata">
            {k}:{v}
          </span>
        ))}
      </td>
    </tr>
  );
}

export function RunsPage() {
  const search = route.useSearch();
  const runs = useRunPages(search);
  const defs = useDefinitionIndex();
  const listed = runs.data?.pages.flatMap((p) => p.items) ?? [];
  // the server answers the search text (GET /v1/runs?q=): what is listed is what it found
  const items = listed;
  const byId = search.q && UUID.test(search.q) && !items.some((r) => r.id === search.q?.toLowerCase()) ? search.q.toLowerCase() : null;
  // durations of runs still going move each second, not only when the list is re-read
  const now = useNow(listed.some((r) => !TERMINAL_RUN_STATUSES.has(r.status)));
  const filtered = isFiltered(search);
  const canOperate = useCan('operate');
  const canRun = useCan('run');
  const bulkFilter = bulkFilterOf(search);
  const [bulkOpen, setBulkOpen] = useState(false);
  return (
    <div className="page runs-page">
      <div className="page-head">
        <div>
          <h1>Runs</h1>
          <p className="muted">Newest first · updates live</p>
        </div>
        <div className="action-row">
          {canOperate ? (
            <button
              type="button"
              className="btn"
              disabled={!bulkFilter}
              title={bulkFilter ? undefined : 'Filter the list first: a bulk action applies to the runs the filters match'}
              onClick={() => setBulkOpen(true)}
            >
              Act on matching runs…
            </button>
          ) : null}
          {canRun ? (
            <Link to="/definitions" className="btn btn-primary">
              Start a run
            </Link>
          ) : null}
        </div>
      </div>
      {bulkOpen && bulkFilter ? <BulkDialog filter={bulkFilter} onClose={() => setBulkOpen(false)} /> : null}
      <Filters search={search} key={search.conversationId ?? ''} />
      {byId ? (
        <p className="notice" role="status">
          No listed run has this id.{' '}
          <Link to="/run" search={{ runId: byId }}>
            Open run <span className="mono">{byId.slice(0, 8)}</span>
          </Link>
        </p>
      ) : null}
      <ListTable
        columns={COLUMNS}
        query={runs}
        refusalTitle="Could not list runs"
        moreLabel="Load older runs"
        rowCount={items.length}
        skeletonRows={6}
        empty={
          <EmptyState title={filtered ? 'No run matches these filters' : 'No runs yet'}>
            {filtered ? 'Clear a filter to see more.' : <Link to="/definitions">Start one from a definition.</Link>}
          </EmptyState>
        }
      >
        {items.map((r) => (
          <RunRow key={r.id} run={r} definitionName={defs.get(r.definitionId)?.name} now={now} />
        ))}
      </ListTable>
    </div>
  );
}
