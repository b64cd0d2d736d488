/**
 * Inbound webhooks of the tenant (`/v1/webhooks`): each hook's public URL (copyable: senders
 * POST there, no API key), what a delivery becomes (a run of a definition, or an event), how it
 * is verified and its secrets by id (values are never read back). With the `define` scope:
 * create (a preset — Standard Webhooks, GitHub, Stripe, Slack —, a custom HMAC, a bearer token
 * or none; a secret typed once or generated and shown once), rotate (a second secret, the old
 * ones ending at a chosen time) and delete. "Deliveries" lists the newest deliveries with their
 * verdicts — verified, refused and why, duplicate — and the run or event each made; with the
 * `run` scope a delivery is replayed (its kept body delivered again: a run it started is
 * answered again, not started twice).
 */
import { useEffect, useId, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { Webhook, WebhookDelivery } from '@flowline/client';
import { keys, useDefinitionIndex, useWebhookDeliveries, useWebhooks } from '../api/queries';
import { useCan } from '../session/session';
import { actDialog, useKeyedAct } from '../runs/acts';
import { Dialog, DialogActions, DialogDone } from '../ui/Dialog';
import { CopyButton, EmptyState, ListTable, Loading, RefusalNote, Time, type Column } from '../ui/primitives';
import { VerdictBadge } from '../ui/Verdict';
import { DeleteDialog, Field, RowActions, TextField } from '../resources/fields';
import { createBody, rotationBody, VERIFICATION_LABELS, VERIFICATIONS, verificationOf, type HookForm, type Verification } from './hook-body';

const COLUMNS: readonly Column[] = [
  { label: 'Slug' },
  { label: 'Delivers to' },
  { label: 'Verification' },
  { label: 'URL' },
  { label: 'Secrets' },
  { label: 'Actions', hidden: true },
];

/** A text with a button copying it; `label` names what is copied. */
function CopyText({ text, label }: { text: string; label: string }) {
  return (
    <span className="copy-text">
      <code>{text}</code>
      <CopyButton text={text} label={label} />
    </span>
  );
}

function TargetText({ hook, names }: { hook: Webhook; names: Map<string, { name: string }> }) {
  if ('event' in hook.target) {
    return (
      <>
        event <code>{hook.target.event}</code>
      </>
    );
  }
  const def = names.get(hook.target.definitionId);
  return <>runs of {def ? <strong>{def.name}</strong> : <code>{hook.target.definitionId.slice(0, 8)}</code>}</>;
}

function SecretsText({ hook }: { hook: Webhook }) {
  const secrets = hook.auth.secrets ?? [];
  if (secrets.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="plain-list small">
      {secrets.map((s) => (
        <li key={s.id}>
          <code>{s.id}</code> {s.notAfter ? <span className="muted">until {new Date(s.notAfter).toLocaleString()}</span> : null}
        </li>
      ))}
    </ul>
  );
}

type Open = { kind: 'new' } | { kind: 'deliveries' | 'rotate' | 'delete'; hook: Webhook } | { kind: 'secret'; hook: Webhook; secret: string } | null;

export function WebhooksPage() {
  const hooks = useWebhooks();
  const names = useDefinitionIndex();
  const canDefine = useCan('define');
  const [open, setOpen] = useState<Open>(null);
  const items = hooks.data?.items ?? [];
  const close = () => setOpen(null);
  // a write that generated a secret shows it once, then never again
  const saved = (hook: Webhook) => setOpen(hook.secret ? { kind: 'secret', hook, secret: hook.secret } : null);
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Webhooks</h1>
          <p className="muted">URLs other services POST to: each verified delivery starts a run of a definition or becomes an event. Every delivery is logged with its verdict.</p>
        </div>
        {canDefine ? (
          <button type="button" className="btn btn-primary" onClick={() => setOpen({ kind: 'new' })}>
            Create webhook
          </button>
        ) : null}
      </div>
      <ListTable
        columns={COLUMNS}
        query={{ ...hooks, hasNextPage: false, isFetchingNextPage: false, fetchNextPage: () => undefined }}
        refusalTitle="Could not list webhooks"
        moreLabel="Load more"
        rowCount={items.length}
        skeletonRows={3}
        empty={
          <EmptyState title="No webhooks yet">
            Create one here or with <code>POST /v1/webhooks</code>.
          </EmptyState>
        }
      >
        {items.map((h) => (
          <tr key={h.id} data-hook-slug={h.slug}>
            <td className="mono cell-title">{h.slug}</td>
            <td className="small">
              <TargetText hook={h} names={names} />
            </td>
            <td className="small">{VERIFICATION_LABELS[verificationOf(h)]}</td>
            <td className="small">
              <CopyText text={h.url} label={`URL of ${h.slug}`} />
            </td>
            <td>
              <SecretsText hook={h} />
            </td>
            <RowActions
              name={h.slug}
              canDefine={canDefine}
              actions={[
                { label: 'Deliveries', main: true, onClick: () => setOpen({ kind: 'deliveries', hook: h }) },
                ...(h.auth.type === 'none' ? [] : [{ label: 'Rotate secret', defines: true, onClick: () => setOpen({ kind: 'rotate', hook: h }) }]),
                { label: 'Delete', defines: true, onClick: () => setOpen({ kind: 'delete', hook: h }) },
              ]}
            />
          </tr>
        ))}
      </ListTable>
      {open?.kind === 'new' ? <CreateDialog onClose={close} onSaved={saved} /> : null}
      {open?.kind === 'rotate' ? <RotateDialog hook={open.hook} onClose={close} onSaved={saved} /> : null}
      {open?.kind === 'secret' ? <SecretOnceDialog hook={open.hook} secret={open.secret} onClose={close} /> : null}
      {open?.kind === 'deliveries' ? <DeliveriesDialog hook={open.hook} onClose={close} /> : null}
      {open?.kind === 'delete' ? (
        <DeleteDialog name={open.hook.slug} queryKey={keys.webhooks} remove={(c) => c.webhooks.delete(open.hook.id)} onClose={close}>
          Its URL stops answering at once and its delivery log goes with it; the runs and events its deliveries made stay.
        </DeleteDialog>
      ) : null}
    </div>
  );
}

const EMPTY_FORM: HookForm = {
  slug: '',
  target: { kind: 'definition', definitionId: '' },
  verification: 'standardWebhooks',
  secret: '',
  custom: { header: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' },
};

function CreateDialog({ onClose, onSaved }: { onClose(): void; onSaved(hook: Webhook): void }) {
  const id = useId();
  const defs = useDefinitionIndex();
  const qc = useQueryClient();
  // the picker lists the definitions as they are now: one created a moment ago is offered too
  useEffect(() => void qc.invalidateQueries({ queryKey: [...keys.definitions, 'index'] }), [qc]);
  const [f, setF] = useState<HookForm>(EMPTY_FORM);
  const set = (patch: Partial<HookForm>) => setF((x) => ({ ...x, ...patch }));
  const save = useKeyedAct(keys.webhooks, async (c, _op, form: HookForm) => onSaved(await c.webhooks.create(createBody(form))));
  const ends = actDialog(save, onClose);
  const targetSet = f.target.kind === 'definition' ? f.target.definitionId !== '' : f.target.event.trim() !== '';
  const hasSecret = f.verification !== 'none';
  return (
    <Dialog title="Create a webhook" onClose={ends.close} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (targetSet) save.run(f);
        }}
      >
        <TextField id={`${id}-slug`} label="Slug (optional)" help="The URL's last segment: a-z 0-9 _ -. Generated when blank." value={f.slug} onChange={(slug) => set({ slug })} mono />
        <fieldset className="form-field">
          <legend>Each delivery becomes</legend>
          <label className="radio">
            <input type="radio" name={`${id}-target`} checked={f.target.kind === 'definition'} onChange={() => set({ target: { kind: 'definition', definitionId: '' } })} /> a run of a definition
          </label>
          <label className="radio">
            <input type="radio" name={`${id}-target`} checked={f.target.kind === 'event'} onChange={() => set({ target: { kind: 'event', event: '' } })} /> an event
          </label>
        </fieldset>
        {f.target.kind === 'definition' ? (
          <Field id={`${id}-def`} label="Definition">
            <select id={`${id}-def`} value={f.target.definitionId} onChange={(e) => set({ target: { kind: 'definition', definitionId: e.target.value } })} required>
              <option value="">Choose a definition</option>
              {[...defs.values()].map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
          </Field>
        ) : (
          <TextField id={`${id}-event`} label="Event name" help="Each delivery is sent as an event of this name." value={f.target.event} onChange={(event) => set({ target: { kind: 'event', event } })} mono required />
        )}
        <Field id={`${id}-verify`} label="Verification">
          <select id={`${id}-verify`} value={f.verification} onChange={(e) => set({ verification: e.target.value as Verification })}>
            {VERIFICATIONS.map((v) => (
              <option key={v} value={v}>
                {VERIFICATION_LABELS[v]}
              </option>
            ))}
          </select>
        </Field>
        {f.verification === 'custom' ? <CustomHmacFields id={id} f={f} set={set} /> : null}
        {hasSecret ? (
          <Field id={`${id}-secret`} label="Secret (optional)" help={f.verification === 'standardWebhooks' ? 'whsec_ and base64. Blank: one is generated and shown once.' : 'At least 16 characters. Blank: one is generated and shown once.'}>
            <input
              id={`${id}-secret`}
              type="password"
              autoComplete="new-password"
              className="mono"
              value={f.secret}
              aria-describedby={`${id}-secret-help`}
              onChange={(e) => set({ secret: e.target.value })}
            />
          </Field>
        ) : (
          <p className="field-error">Anyone who knows the URL can deliver to it.</p>
        )}
        <RefusalNote error={save.error} title="Refused" />
        <DialogActions back="Cancel" onBack={ends.close} act="Create" disabled={!targetSet || save.pending} />
      </form>
    </Dialog>
  );
}

function CustomHmacFields({ id, f, set }: { id: string; f: HookForm; set(patch: Partial<HookForm>): void }) {
  const c = f.custom;
  const patch = (p: Partial<HookForm['custom']>) => set({ custom: { ...c, ...p } });
  return (
    <div className="form-row">
      <TextField id={`${id}-header`} label="Signature header" value={c.header} onChange={(header) => patch({ header })} mono />
      <Field id={`${id}-alg`} label="Algorithm">
        <select id={`${id}-alg`} value={c.algorithm} onChange={(e) => patch({ algorithm: e.target.value as HookForm['custom']['algorithm'] })}>
          <option value="sha256">sha256</option>
          <option value="sha512">sha512</option>
          <option value="sha1">sha1</option>
        </select>
      </Field>
      <Field id={`${id}-enc`} label="Encoding">
        <select id={`${id}-enc`} value={c.encoding} onChange={(e) => patch({ encoding: e.target.value as HookForm['custom']['encoding'] })}>
          <option value="hex">hex</option>
          <option value="base64">base64</option>
        </select>
      </Field>
      <TextField id={`${id}-prefix`} label="Prefix" help="Before the signature, e.g. sha256=" value={c.prefix} onChange={(prefix) => patch({ prefix })} mono />
    </div>
  );
}

/** A datetime-local value `hours` from now (the browser's zone). */
function localInputAfter(hours: number): string {
  const d = new Date(Date.now() + hours * 3_600_000);
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
}

function RotateDialog({ hook, onClose, onSaved }: { hook: Webhook; onClose(): void; onSaved(hook: Webhook): void }) {
  const id = useId();
  const [newId, setNewId] = useState(`s${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`);
  const [value, setValue] = useState('');
  const [until, setUntil] = useState(localInputAfter(24));
  const save = useKeyedAct(keys.webhooks, async (c, _op, body: ReturnType<typeof rotationBody>) => onSaved(await c.webhooks.update(hook.id, body)));
  const ends = actDialog(save, onClose);
  const untilIso = until === '' ? null : new Date(until).toISOString();
  return (
    <Dialog title={`Rotate the secret of ${hook.slug}`} onClose={ends.close} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.run(rotationBody(hook, { newId: newId.trim(), value, oldNotAfter: untilIso }));
        }}
      >
        <p className="small">
          Both secrets verify until the old ones end, so senders can switch without a refused delivery. Current: <SecretsText hook={hook} />
        </p>
        <div className="form-row">
          <TextField id={`${id}-new`} label="New secret id" value={newId} onChange={setNewId} mono required />
          <Field id={`${id}-until`} label="Old secrets verify until" help="Your local time. Blank: they never end.">
            <input id={`${id}-until`} type="datetime-local" value={until} aria-describedby={`${id}-until-help`} onChange={(e) => setUntil(e.target.value)} />
          </Field>
        </div>
        <Field id={`${id}-value`} label="New secret (optional)" help="Blank: one is generated and shown once.">
          <input id={`${id}-value`} type="password" autoComplete="new-password" className="mono" value={value} aria-describedby={`${id}-value-help`} onChange={(e) => setValue(e.target.value)} />
        </Field>
        <RefusalNote error={save.error} title="Refused" />
        <DialogActions back="Cancel" onBack={ends.close} act="Rotate" disabled={newId.trim() === '' || save.pending} />
      </form>
    </Dialog>
  );
}

/** A generated secret, shown this once: the API never answers it again. */
function SecretOnceDialog({ hook, secret, onClose }: { hook: Webhook; secret: string; onClose(): void }) {
  return (
    <Dialog title={`Secret of ${hook.slug}`} onClose={onClose}>
      <p role="status">Copy it now: it is shown this once and cannot be read back.</p>
      <p className="secret-once">
        <CopyText text={secret} label="the secret" />
      </p>
      <p className="small">
        Deliveries go to <CopyText text={hook.url} label={`URL of ${hook.slug}`} />
      </p>
      <DialogDone onClose={onClose} />
    </Dialog>
  );
}

function DeliveryRow({ hook, d }: { hook: Webhook; d: WebhookDelivery }) {
  const canRun = useCan('run');
  const replay = useKeyedAct(keys.webhookDeliveries(hook.id), (c) => c.webhooks.replay(hook.id, d.id));
  return (
    <tr data-delivery-id={d.id} data-verdict={d.verdict}>
      <td>
        <Time iso={d.receivedAt} />
      </td>
      <td>
        <VerdictBadge verdict={d.verdict} /> <span className="muted small">{d.status}</span>
      </td>
      <td className="small">
        {d.runId ? (
          <Link to="/run" search={{ runId: d.runId }}>
            run <code>{d.runId.slice(0, 8)}</code>
          </Link>
        ) : null}
        {d.eventId ? (
          <Link to="/events" search={{ eventId: d.eventId }}>
            event <code>{d.eventId.slice(0, 8)}</code>
          </Link>
        ) : null}
        {d.reason ? <div className={d.verdict === 'verified' || d.verdict === 'duplicate' ? 'muted' : 'field-error'}>{d.reason}</div> : null}
        {d.dedupeKey ? <div className="muted">dedupe key <code>{d.dedupeKey}</code></div> : null}
        <RefusalNote error={replay.error} title="The replay was refused" />
      </td>
      <td className="actions">
        {canRun ? (
          <button type="button" className="btn btn-sm btn-ghost" disabled={replay.pending} onClick={() => replay.run()} aria-label={`Replay the delivery of ${new Date(d.receivedAt).toLocaleTimeString()}`}>
            Replay
          </button>
        ) : null}
      </td>
    </tr>
  );
}

function DeliveriesDialog({ hook, onClose }: { hook: Webhook; onClose(): void }) {
  const deliveries = useWebhookDeliveries(hook.id);
  const items = deliveries.data?.items ?? [];
  return (
    <Dialog title={`Deliveries to ${hook.slug}`} onClose={onClose} wide>
      <p className="small">
        Senders POST to <CopyText text={hook.url} label={`URL of ${hook.slug}`} />
      </p>
      {deliveries.isPending ? <Loading /> : null}
      <RefusalNote error={deliveries.error} title="Could not read the deliveries" />
      {deliveries.data && items.length === 0 ? <p className="muted">No delivery yet.</p> : null}
      {items.length > 0 ? (
        <table className="table" aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Verdict</th>
              <th scope="col">What it made, or why not</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <DeliveryRow key={d.id} hook={hook} d={d} />
            ))}
          </tbody>
        </table>
      ) : null}
      <DialogDone onClose={onClose} />
    </Dialog>
  );
}
