/** `flowline events` and `flowline webhooks`: the event intake, what events started, and inbound webhooks. */
import type { Command } from 'commander';
import type { WebhookBody } from '@flowline/client';
import { jsonArgument, positiveInt, readJsonFile } from '../args';
import { table } from '../format';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';

export function registerEvents(program: Command, s: Session, wrap: Wrap): void {
  const events = program.command('events').description('send events; see which definitions they started');

  events
    .command('send')
    .description('send one event (POST /v1/events): starts the runs of definitions whose triggers match, wakes waiting Waits; prints its id')
    .argument('<name>', 'event name, e.g. order.paid')
    .option('--data <json>', 'its data: inline JSON or @file', '{}')
    .option('--id <id>', 'its id (a repeat of it starts nothing new)')
    .action(
      wrap(async (name: string, o: { data: string; id?: string }) => {
        const data = await jsonArgument(o.data, s.io.cwd, '--data');
        const r = await s.client().events.send([{ name, data, ...(o.id !== undefined ? { id: o.id } : {}) }]);
        s.print(r, () => `${r.ids[0]}${r.duplicates.length > 0 ? ' (duplicate: sent before)' : ''}\n`);
        return EXIT.ok;
      }),
    );

  events
    .command('get')
    .description('an event and what each subscribed definition made of it')
    .argument('<id>', 'event id')
    .action(
      wrap(async (id: string) => {
        const e = await s.client().events.get(id);
        s.print(e, () =>
          `${e.name} ${e.id} received ${e.receivedAt} · fan-out ${e.fanout}\n` +
          table(
            ['definition', 'outcome', 'run', 'reason'],
            e.matches.map((m) => [m.definitionName ?? m.definitionId, m.outcome, m.runId ?? '', m.reason ?? '']),
          ),
        );
        return EXIT.ok;
      }),
    );

  events
    .command('replay')
    .description('judge an event again (e.g. by a definition published after it); never starts a second run')
    .argument('<id>', 'event id')
    .option('--definition <id...>', 'only these definitions')
    .action(
      wrap(async (id: string, o: { definition?: string[] }) => {
        const r = await s.client().events.replay(id, o.definition);
        s.print(r, () => table(['definition', 'outcome', 'run', 'reason'], r.matches.map((m) => [m.definitionId, m.outcome, m.runId ?? '', m.reason ?? ''])));
        return EXIT.ok;
      }),
    );

  const hooks = program.command('webhooks').description('inbound webhooks: create, list, deliveries, replay');

  hooks
    .command('list')
    .description("the tenant's webhooks")
    .action(
      wrap(async () => {
        const page = await s.client().webhooks.list();
        s.print(page, () => table(['id', 'slug', 'target', 'auth', 'url'], page.items.map((h) => [h.id, h.slug, targetText(h.target), authText(h.auth), h.url])));
        return EXIT.ok;
      }),
    );

  hooks
    .command('create')
    .description('create a webhook from a JSON file (POST /v1/webhooks body); prints its URL and, when generated, its secret (shown once)')
    .argument('<webhook.json>', '{ slug?, target, auth, dedupeHeader?, maxBodyBytes?, response? }')
    .action(
      wrap(async (file: string) => {
        const body = (await readJsonFile(file, s.io.cwd, 'webhook')) as WebhookBody;
        const h = await s.client().webhooks.create(body);
        s.print(h, () => `${h.id}\n${h.url}\n${h.secret !== undefined ? `secret ${h.secret} (shown once)\n` : ''}`);
        return EXIT.ok;
      }),
    );

  hooks
    .command('delete')
    .description('delete a webhook and its delivery log')
    .argument('<id>', 'webhook id')
    .action(
      wrap(async (id: string) => {
        await s.client().webhooks.delete(id);
        s.print({ deleted: id }, () => `deleted ${id}\n`);
        return EXIT.ok;
      }),
    );

  hooks
    .command('deliveries')
    .description("a webhook's deliveries with their verdicts, newest first")
    .argument('<id>', 'webhook id')
    .option('--limit <n>', 'how many (at most 200)', positiveInt)
    .action(
      wrap(async (id: string, o: { limit?: number }) => {
        const page = await s.client().webhooks.deliveries(id, o.limit);
        s.print(page, () =>
          table(
            ['id', 'received', 'verdict', 'status', 'run', 'reason'],
            page.items.map((d) => [d.id, d.receivedAt, d.verdict, String(d.status), d.runId ?? d.eventId ?? '', d.reason ?? '']),
          ),
        );
        return EXIT.ok;
      }),
    );

  hooks
    .command('replay')
    .description('deliver a kept body again (a delivery whose signature verified)')
    .argument('<id>', 'webhook id')
    .argument('<deliveryId>', 'delivery id')
    .action(
      wrap(async (id: string, deliveryId: string) => {
        const d = await s.client().webhooks.replay(id, deliveryId);
        s.print(d, () => `${d.verdict}${d.runId ? ` ${d.runId}` : ''}${d.eventId ? ` ${d.eventId}` : ''}\n`);
        return EXIT.ok;
      }),
    );
}

function targetText(t: { definitionId: string } | { event: string }): string {
  return 'definitionId' in t ? `definition ${t.definitionId}` : `event ${t.event}`;
}

function authText(a: { type: string; preset?: unknown }): string {
  return a.type === 'hmac' ? `hmac ${String(a.preset ?? 'standardWebhooks')}` : a.type;
}
