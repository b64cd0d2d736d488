/**
 * Sending a signal into a run (`POST /v1/runs/{id}/signals {channel, payload, requestId}`): the
 * channel is picked from the ones the run's pinned graph declares (its `signals` member), or
 * typed (the API answers an undeclared one 404 SignalUnknown), the payload is JSON (checked by
 * the API against the channel's schema: 422). A signal sent before its Wait is reached is
 * kept for it. Each send has its own requestId (the idempotency key); a refusal — 404, 422, or
 * 409 for a run that has ended — is shown as the API said it. Needs the `run` scope: without it
 * the form is disabled and says why.
 */
import { useId, useState } from 'react';
import { useCan } from '../session/session';
import { Dialog } from '../ui/Dialog';
import { JsonField, useJsonText } from '../ui/JsonField';
import { RefusalNote } from '../ui/primitives';
import { useAct } from './acts';

/** The channels a graph document declares (`signals: { name: { schema? } }`), in document order. */
export function declaredChannels(graph: unknown): string[] {
  const s = (graph as { signals?: unknown } | null)?.signals;
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? Object.keys(s) : [];
}

export function SignalForm({ runId, graph, channel: initial }: { runId: string; graph: unknown; channel?: string }) {
  const canSend = useCan('run');
  const id = useId();
  const channels = declaredChannels(graph);
  const [channel, setChannel] = useState(initial ?? channels[0] ?? '');
  const payload = useJsonText('{}');
  const [sent, setSent] = useState<string | null>(null);
  const send = useAct(runId, (c, operationId, a: { channel: string; payload: unknown }) => c.runs.signal(runId, { channel: a.channel, payload: a.payload, requestId: operationId }));
  const ready = canSend && channel.trim() !== '' && payload.parsed.ok && !send.pending;
  return (
    <form
      className="signal-form"
      aria-label="Send a signal"
      onSubmit={(e) => {
        e.preventDefault();
        if (!ready || !payload.parsed.ok) return;
        setSent(null);
        const ch = channel.trim();
        void send.runAsync({ channel: ch, payload: payload.parsed.value }).then((ok) => ok && setSent(ch));
      }}
    >
      <h4>Send a signal</h4>
      <fieldset disabled={!canSend} aria-describedby={canSend ? undefined : `${id}-why`}>
        <label htmlFor={`${id}-channel`}>Channel</label>
        <input id={`${id}-channel`} list={`${id}-channels`} value={channel} onChange={(e) => setChannel(e.target.value)} autoComplete="off" />
        <datalist id={`${id}-channels`}>
          {channels.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
        <p className="muted small">{channels.length > 0 ? `This graph declares: ${channels.join(', ')}.` : 'This graph declares no signal channel.'}</p>
        <JsonField id={`${id}-payload`} label="Payload (JSON)" rows={3} field={payload} help="Checked against the channel’s schema, if it has one." />
        <button type="submit" className="btn btn-primary btn-sm" disabled={!ready}>
          Send signal
        </button>
      </fieldset>
      {canSend ? null : (
        <p id={`${id}-why`} className="muted small">
          This key cannot send signals (it lacks the run scope).
        </p>
      )}
      <RefusalNote error={send.error} title="The signal was refused" />
      {sent && !send.error ? (
        <p className="small" role="status">
          Signal sent on <code>{sent}</code>.
        </p>
      ) : null}
    </form>
  );
}

/**
 * The run view's "Send signal…" (a graph that declares channels, a run that can still change):
 * a signal may be sent before the Wait that reads it is reached; it is kept for that Wait.
 */
export function SignalButton({ runId, graph }: { runId: string; graph: unknown }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="btn btn-sm" onClick={() => setOpen(true)}>
        Send signal…
      </button>
      {open ? (
        <Dialog title="Send a signal to this run" onClose={() => setOpen(false)}>
          <p className="muted small">A signal sent before its Wait is reached is kept, in order, for the first Wait on its channel.</p>
          <SignalForm runId={runId} graph={graph} />
        </Dialog>
      ) : null}
    </>
  );
}
