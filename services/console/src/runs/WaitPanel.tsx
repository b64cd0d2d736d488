/**
 * A parked Wait node in the run view: what it waits for, read from the run's blockers (the
 * pure `blockers` of libs/graph names each arm: timer, signal, token, event; a composite Wait
 * lists them under `wait`), with the time left ticking, each token's callback URL (copyable;
 * it needs no key, so it is the credential a partner gets) and a Revoke (`DELETE
 * /v1/waitpoints/{id}`, after a confirmation; the `operate` scope), and the run's signal form.
 * An act this key cannot take is shown disabled with the scope it lacks.
 */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { Blocker } from '@flowline/client';
import { useCan, useClient } from '../session/session';
import { Dialog, DialogActions } from '../ui/Dialog';
import { CopyIcon, Loading, RefusalNote } from '../ui/primitives';
import { actDialog, useAct } from './acts';
import { SignalForm } from './SignalForm';

interface Arm {
  index: number;
  kind: string;
  channel?: string;
  event?: string;
  waitpointId?: string;
  callbackUrl?: string;
  until?: string;
}

/** The arms a Wait's blocker names (one for a plain Wait, its list for a composite one). */
export function waitArmsOf(b: Blocker): { mode: string; arms: Arm[]; until: string | null } | null {
  const d = b.details as Record<string, unknown>;
  const until = typeof d.until === 'string' ? d.until : null;
  if (b.kind === 'wait' && Array.isArray(d.arms)) return { mode: String(d.mode ?? 'any'), arms: d.arms as Arm[], until };
  if (b.kind === 'timer' || b.kind === 'signal' || b.kind === 'token' || b.kind === 'event') {
    return { mode: 'one', arms: [{ index: 0, kind: b.kind, ...(d as Omit<Arm, 'index' | 'kind'>) }], until };
  }
  return null;
}

/** "in 4 min 12 s" / "now" for a time ahead of `now`. */
export function timeLeftText(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (!Number.isFinite(ms)) return '';
  if (ms <= 0) return 'due now';
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `in ${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `in ${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `in ${h} h ${m % 60} min`;
  return `in ${Math.floor(h / 24)} d ${h % 24} h`;
}

/** When: the wall-clock time (the date too when not today), the full time on hover. */
function whenText(iso: string, now: number): string {
  const d = new Date(iso);
  const sameDay = d.toDateString() === new Date(now).toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

function Deadline({ label, iso, now }: { label: string; iso: string; now: number }) {
  return (
    <span className="wait-deadline">
      {label} at{' '}
      <time dateTime={iso} title={new Date(iso).toString()}>
        {whenText(iso, now)}
      </time>{' '}
      <strong className="time-left">({timeLeftText(iso, now)})</strong>
    </span>
  );
}

function CopyUrl({ url }: { url: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="callback-url">
      <code title={url}>{url}</code>
      <button
        type="button"
        className="btn btn-sm"
        onClick={() => {
          void navigator.clipboard?.writeText(url).then(() => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
          });
        }}
      >
        {copied ? null : <CopyIcon />} {copied ? 'Copied' : 'Copy URL'}
      </button>
      <span className="visually-hidden" role="status">
        {copied ? 'Callback URL copied' : ''}
      </span>
    </div>
  );
}

function RevokeToken({ runId, waitpointId }: { runId: string; waitpointId: string }) {
  const canOperate = useCan('operate');
  const [confirming, setConfirming] = useState(false);
  const revoke = useAct(runId, (c, _operationId, id: string) => c.waitpoints.revoke(id));
  const ends = actDialog(revoke, () => setConfirming(false));
  return (
    <>
      <button
        type="button"
        className="btn btn-sm btn-danger"
        disabled={!canOperate}
        aria-describedby={canOperate ? undefined : `why-${waitpointId}`}
        onClick={() => setConfirming(true)}
      >
        Revoke token
      </button>
      {canOperate ? null : (
        <span id={`why-${waitpointId}`} className="muted small">
          This key cannot revoke (it lacks the operate scope).
        </span>
      )}
      {confirming ? (
        <Dialog title="Revoke this token?" onClose={ends.close}>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              ends.submit(waitpointId);
            }}
          >
            <p>Its callback URL stops working at once (410 WaitpointRevoked) and the Wait fires with the token revoked: the run goes on down the path for that case.</p>
            <RefusalNote error={revoke.error} title="Refused" />
            <DialogActions back="Keep it" onBack={ends.close} act="Revoke token" tone="btn-reject" disabled={revoke.pending} />
          </form>
        </Dialog>
      ) : null}
    </>
  );
}

function ArmLine({ runId, arm, now }: { runId: string; arm: Arm; now: number }) {
  switch (arm.kind) {
    case 'timer':
      return (
        <>
          <strong>A timer</strong>
          {arm.until ? (
            <>
              {' '}
              <Deadline label="fires" iso={arm.until} now={now} />
            </>
          ) : null}
        </>
      );
    case 'signal':
      return (
        <>
          <strong>A signal</strong> on channel <code className="tool-name">{arm.channel}</code>
        </>
      );
    case 'event':
      return (
        <>
          <strong>An event</strong> named <code className="tool-name">{arm.event}</code> (sent to <code>POST /v1/events</code>)
        </>
      );
    case 'token':
      return (
        <>
          <div>
            <strong>A callback</strong> to its token{arm.until ? <> · <Deadline label="expires" iso={arm.until} now={now} /></> : null}
          </div>
          {arm.callbackUrl ? <CopyUrl url={arm.callbackUrl} /> : <p className="muted small">The token is being minted.</p>}
          {arm.waitpointId ? (
            <div className="action-row">
              <RevokeToken runId={runId} waitpointId={arm.waitpointId} />
            </div>
          ) : null}
        </>
      );
    default:
      return <strong>{arm.kind}</strong>;
  }
}

export function WaitPanel({ runId, nodeKey, graph, pollMs, now }: { runId: string; nodeKey: string; graph: unknown; pollMs: number | false; now: number }) {
  const client = useClient();
  // the same query as the "Waiting on" tab: one read serves both
  const q = useQuery({ queryKey: ['run', runId, 'blockers'], queryFn: () => client.runs.blockers(runId), refetchInterval: pollMs });
  const mine = q.data?.blockers.find((b) => b.nodeKey === nodeKey);
  const wait = mine ? waitArmsOf(mine) : null;
  const hasSignalArm = wait?.arms.some((a) => a.kind === 'signal') ?? false;
  const firstChannel = wait?.arms.find((a) => a.kind === 'signal')?.channel;
  return (
    <section className="wait-panel card-inset" aria-label="Wait" data-wait-node={nodeKey}>
      <h3>{wait && wait.arms.length > 1 ? `Waiting for ${wait.mode === 'all' ? 'all' : 'any'} of these` : 'Waiting for'}</h3>
      {q.isPending ? <Loading label="Reading what the Wait waits for" /> : null}
      <RefusalNote error={q.error} title="Could not read what the Wait waits for" />
      {wait ? (
        <>
          <ul className="wait-arms">
            {wait.arms.map((arm) => (
              <li key={arm.index} data-arm-kind={arm.kind}>
                <ArmLine runId={runId} arm={arm} now={now} />
              </li>
            ))}
          </ul>
          {wait.until && wait.arms.length > 1 ? (
            <p className="small">
              <Deadline label="Wakes" iso={wait.until} now={now} />
            </p>
          ) : null}
        </>
      ) : mine ? (
        <p className="muted small">{mine.kind === 'tick' ? 'It fires on the dispatcher’s next tick.' : `Waiting (${mine.kind}).`}</p>
      ) : null}
      {hasSignalArm ? <SignalForm runId={runId} graph={graph} {...(firstChannel ? { channel: firstChannel } : {})} /> : null}
    </section>
  );
}
