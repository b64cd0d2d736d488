/**
 * Inbound events of the tenant (`/v1/events`): newest first, filtered by name, each with how its
 * fan-out stands. "Details" opens one event: its data, and what each definition subscribed to
 * its name made of it — matched (a link to the run it started), not matched, a filter error
 * (why, shown as the API said it), deferred or refused. With the `run` scope: "Replay" judges
 * the event again by its subscribers (a definition published after it starts its run; one that
 * already started its run answers that run), and "Send event" posts one (name and JSON data;
 * text that is not JSON is refused before anything is sent). The name filter and the open
 * event live in the URL.
 */
import { useEffect, useId, useState } from 'react';
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import type { EventDetail, EventListItem, EventMatch } from '@flowline/client';
import { keys, useInboundEvent, useInboundEventPages } from '../api/queries';
import { useCan } from '../session/session';
import { actDialog, useKeyedAct } from '../runs/acts';
import { Dialog, DialogActions } from '../ui/Dialog';
import { JsonDoc } from '../ui/JsonDoc';
import { JsonField, useJsonText } from '../ui/JsonField';
import { EmptyState, ListTable, Loading, RefusalNote, ShortId, Time, type Column } from '../ui/primitives';
import { VerdictBadge } from '../ui/Verdict';
import { TextField } from '../resources/fields';

const route = getRouteApi('/events');

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Id' },
  { label: 'Received' },
  { label: 'Subscribers' },
  { label: 'Actions', hidden: true },
];

/** The verdict counts of a listed event, in a fixed order. */
const OUTCOME_ORDER: ReadonlyArray<EventMatch['outcome']> = ['matched', 'filterError', 'refused', 'deferred', 'notMatched'];

function OutcomeSummary({ event }: { event: EventListItem }) {
  const shown = OUTCOME_ORDER.filter((o) => (event.outcomes[o] ?? 0) > 0);
  return (
    <span className="verdicts">
      {shown.map((o) => (
        <span key={o} className="verdict-count">
          <VerdictBadge verdict={o} /> <span className="small">×{event.outcomes[o]}</span>
        </span>
      ))}
      {shown.length === 0 && event.fanout === 'done' ? <span className="muted small">no subscriber</span> : null}
      {event.fanout === 'due' ? <span className="muted small">fan-out in progress</span> : null}
    </span>
  );
}

/** The name filter: applied on submit or when the field is left. */
function NameFilter({ name }: { name: string | undefined }) {
  const id = useId();
  const navigate = useNavigate({ from: '/events' });
  const [text, setText] = useState(name ?? '');
  useEffect(() => setText(name ?? ''), [name]);
  const apply = () => void navigate({ search: (s) => ({ ...s, name: text.trim() || undefined }) });
  return (
    <form
      className="filters"
      aria-label="Filter events"
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} className="mono" value={text} placeholder="order.paid" onChange={(e) => setText(e.target.value)} onBlur={apply} />
      </div>
      <button type="submit" className="btn btn-sm">
        Filter
      </button>
      {name ? (
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => void navigate({ search: (s) => ({ ...s, name: undefined }) })}>
          Clear filter
        </button>
      ) : null}
    </form>
  );
}

export function EventsPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/events' });
  const events = useInboundEventPages(search.name);
  const canRun = useCan('run');
  const [sending, setSending] = useState(false);
  const items = events.data?.pages.flatMap((p) => p.items) ?? [];
  const now = events.dataUpdatedAt || Date.now();
  const open = (eventId: string | undefined) => void navigate({ search: (s) => ({ ...s, eventId }) });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Events</h1>
          <p className="muted">Events sent to this tenant, newest first: each starts a run of every definition whose triggers match it, and wakes the Waits that wait on its name.</p>
        </div>
        {canRun ? (
          <button type="button" className="btn btn-primary" onClick={() => setSending(true)}>
            Send event
          </button>
        ) : null}
      </div>
      <NameFilter name={search.name} />
      <ListTable
        columns={COLUMNS}
        query={events}
        refusalTitle="Could not list events"
        moreLabel="Load more events"
        rowCount={items.length}
        skeletonRows={3}
        empty={
          <EmptyState title={search.name ? `No event named ${search.name}` : 'No events yet'}>
            Send one here, with <code>POST /v1/events</code>, or through a webhook whose target is an event.
          </EmptyState>
        }
      >
        {items.map((e) => (
          <tr key={e.id} data-event-id={e.id}>
            <td className="mono">{e.name}</td>
            <td className="mono small clamp" title={e.id}>
              {e.id}
            </td>
            <td>
              <Time iso={e.receivedAt} now={now} />
            </td>
            <td>
              <OutcomeSummary event={e} />
            </td>
            <td className="actions">
              <button type="button" className="btn btn-sm" onClick={() => open(e.id)} aria-label={`Details of event ${e.id}`}>
                Details
              </button>
            </td>
          </tr>
        ))}
      </ListTable>
      {search.eventId ? <EventDialog eventId={search.eventId} canRun={canRun} onClose={() => open(undefined)} /> : null}
      {sending ? <SendEventDialog onClose={() => setSending(false)} onSent={(id) => open(id)} /> : null}
    </div>
  );
}

/** One subscriber's verdict: the definition, the verdict, the run it started or why none. */
function MatchRow({ m }: { m: EventMatch }) {
  return (
    <tr data-definition-id={m.definitionId} data-outcome={m.outcome}>
      <td>{m.definitionName ?? <span className="muted">deleted definition</span>}</td>
      <td>
        <VerdictBadge verdict={m.outcome} />
      </td>
      <td className="small">
        {m.runId ? (
          <Link to="/run" search={{ runId: m.runId }} aria-label={`Run ${m.runId.slice(0, 8)} started for ${m.definitionName ?? m.definitionId}`}>
            run <code>{m.runId.slice(0, 8)}</code>
          </Link>
        ) : null}
        {m.reason ? <div className={m.outcome === 'filterError' || m.outcome === 'refused' ? 'field-error' : 'muted'}>{m.reason}</div> : null}
      </td>
      <td>
        <Time iso={m.at} />
      </td>
    </tr>
  );
}

function Verdicts({ event }: { event: EventDetail }) {
  if (event.matches.length === 0) {
    return <p className="muted">{event.fanout === 'due' ? 'The subscribers are being judged…' : 'No definition listens for this name.'}</p>;
  }
  return (
    <table className="table" aria-label="Subscribers">
      <thead>
        <tr>
          <th scope="col">Definition</th>
          <th scope="col">Verdict</th>
          <th scope="col">Run or reason</th>
          <th scope="col">Judged</th>
        </tr>
      </thead>
      <tbody>
        {event.matches.map((m) => (
          <MatchRow key={m.definitionId} m={m} />
        ))}
      </tbody>
    </table>
  );
}

/** An event's data and verdicts; "Replay" judges it again and says what this replay decided. */
function EventDialog({ eventId, canRun, onClose }: { eventId: string; canRun: boolean; onClose(): void }) {
  const event = useInboundEvent(eventId);
  const [replayed, setReplayed] = useState<number | null>(null);
  const replay = useKeyedAct(keys.inboundEvent(eventId), async (c) => setReplayed((await c.events.replay(eventId)).matches.length));
  return (
    <Dialog title={`Event ${event.data?.name ?? eventId}`} onClose={onClose} wide>
      {event.isPending ? <Loading /> : null}
      <RefusalNote error={event.error} title="Could not read the event" />
      {event.data ? (
        <>
          <p className="small">
            id <ShortId id={event.data.id} /> · received <Time iso={event.data.receivedAt} />
            {event.data.ts ? (
              <>
                {' '}
                · sent <span className="mono">{event.data.ts}</span>
              </>
            ) : null}
          </p>
          <JsonDoc title="Data" value={event.data.data} expandAll />
          <h3 className="small">What each subscriber made of it</h3>
          <Verdicts event={event.data} />
        </>
      ) : null}
      <RefusalNote error={replay.error} title="The replay was refused" />
      {replayed !== null && !replay.error ? (
        <p role="status" className="small">
          Replayed: {replayed} subscriber{replayed === 1 ? '' : 's'} judged again.
        </p>
      ) : null}
      <div className="dialog-actions">
        {canRun ? (
          <button
            type="button"
            className="btn"
            disabled={replay.pending || !event.data}
            onClick={() => {
              setReplayed(null);
              replay.run();
            }}
          >
            Replay
          </button>
        ) : null}
        <button type="button" className="btn btn-primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

/** "Send event": a name and its JSON data (blank: null); text that is not JSON cannot be sent. */
function SendEventDialog({ onClose, onSent }: { onClose(): void; onSent(eventId: string): void }) {
  const id = useId();
  const [name, setName] = useState('');
  const data = useJsonText('{}', true);
  // the act's id is the event's: a request sent again is the same event (deduplicated), not a second one
  const send = useKeyedAct(['inbound-events'], async (c, operationId, e: { name: string; data: unknown }) => {
    const answer = await c.events.send([{ name: e.name, data: e.data, id: operationId }]);
    onSent(answer.ids[0]!);
  });
  const ends = actDialog(send, onClose);
  const valid = name.trim() !== '' && data.parsed.ok;
  return (
    <Dialog title="Send an event" onClose={ends.close} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (valid && data.parsed.ok) ends.submit({ name: name.trim(), data: data.parsed.value ?? null });
        }}
      >
        <TextField id={`${id}-name`} label="Name" help="1–128 of A-Z a-z 0-9 _ . : / -, such as order.paid." value={name} onChange={setName} mono required />
        <div className="form-field">
          <JsonField id={`${id}-data`} label="Data (JSON)" rows={6} field={data} help="Any JSON; blank sends null. Triggers' filters and Waits read it." />
        </div>
        <RefusalNote error={send.error} title="The event was refused" />
        <DialogActions back="Cancel" onBack={ends.close} act="Send" disabled={!valid || send.pending} />
      </form>
    </Dialog>
  );
}
