/** `flowline schedules list | get | apply | pause | resume | trigger | preview | slots | delete`. */
import type { Command } from 'commander';
import type { ScheduleBody } from '@flowline/client';
import { positiveInt, readJsonFile } from '../args';
import { fields, pretty } from '../format';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';

export function registerSchedules(program: Command, s: Session, wrap: Wrap): void {
  const sch = program.command('schedules').description('runs started on a cron or interval');

  sch
    .command('list')
    .description("list the tenant's schedules (newest first)")
    .option('--limit <n>', 'page size (the API clamps it to 200)', positiveInt)
    .option('--cursor <cursor>', 'the next page, from a previous listing')
    .action(
      wrap(async (o: { limit?: number; cursor?: string }) => {
        const page = await s.client().schedules.list({ ...(o.limit ? { limit: o.limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) });
        s.printPage(page, ['id', 'key', 'spec', 'timezone', 'paused', 'next'], (x) => [
          x.id,
          x.key,
          x.spec.cron ?? `every ${x.spec.every}`,
          x.spec.timezone,
          x.paused ? 'yes' : 'no',
          x.nextSlot?.local ?? '-',
        ]);
        return EXIT.ok;
      }),
    );

  sch
    .command('get')
    .description('show a schedule')
    .argument('<id>', 'schedule id')
    .action(
      wrap(async (id: string) => {
        const x = await s.client().schedules.get(id);
        s.print(x, () =>
          fields([
            ['id', x.id],
            ['key', x.key],
            ['definition', x.definitionId],
            ['version', x.version],
            ['paused', x.paused ? `yes (${x.pausedReason ?? ''})` : 'no'],
            ['next', x.nextSlot ? `${x.nextSlot.local} (${x.nextSlot.at})` : '-'],
            ['last slot', x.lastSlotAt],
          ]) + `spec\n${pretty(x.spec)}policy\n${pretty(x.policy)}`,
        );
        return EXIT.ok;
      }),
    );

  sch
    .command('apply')
    .description('create a schedule from a JSON file, or update the one with its key (an upsert); prints its id')
    .argument('<schedule.json>', '{ key, definitionId, version?, input?, metadata?, spec, policy? }')
    .action(
      wrap(async (file: string) => {
        const body = (await readJsonFile(file, s.io.cwd, 'schedule')) as ScheduleBody;
        const x = await s.client().schedules.upsert(body);
        s.print(x, () => `${x.id}\n`);
        return EXIT.ok;
      }),
    );

  sch
    .command('pause')
    .description('pause a schedule: no slot is decided until it resumes')
    .argument('<id>', 'schedule id')
    .option('--reason <text>', 'why (shown with the schedule)')
    .action(
      wrap(async (id: string, o: { reason?: string }) => {
        const x = await s.client().schedules.pause(id, o.reason !== undefined ? { reason: o.reason } : {});
        s.print(x, () => `${x.id} paused\n`);
        return EXIT.ok;
      }),
    );

  sch
    .command('resume')
    .description('resume a schedule (its slots count from now)')
    .argument('<id>', 'schedule id')
    .action(
      wrap(async (id: string) => {
        const x = await s.client().schedules.resume(id);
        s.print(x, () => `${x.id} resumed; next ${x.nextSlot?.local ?? '-'}\n`);
        return EXIT.ok;
      }),
    );

  sch
    .command('trigger')
    .description('start a run of the schedule now; prints the run id')
    .argument('<id>', 'schedule id')
    .action(
      wrap(async (id: string) => {
        const t = await s.client().schedules.trigger(id);
        s.print(t, () => `${t.runId}\n`);
        return EXIT.ok;
      }),
    );

  sch
    .command('preview')
    .description('the next slots, in the schedule zone with their UTC offsets')
    .argument('<id>', 'schedule id')
    .option('--count <n>', 'how many (at most 100)', positiveInt)
    .action(
      wrap(async (id: string, o: { count?: number }) => {
        const p = await s.client().schedules.preview(id, o.count);
        s.print(p, () => p.slots.map((x) => `${x.local}  ${x.at}`).join('\n') + '\n');
        return EXIT.ok;
      }),
    );

  sch
    .command('slots')
    .description('the slot ledger, newest first: each slot with its outcome and run or reason')
    .argument('<id>', 'schedule id')
    .option('--limit <n>', 'page size', positiveInt)
    .action(
      wrap(async (id: string, o: { limit?: number }) => {
        const page = await s.client().schedules.slots(id, o.limit ? { limit: o.limit } : {});
        s.printPage(page, ['slot', 'source', 'outcome', 'run / reason'], (x) => [x.slotAt, x.source, x.outcome, x.runId ?? x.reason ?? '']);
        return EXIT.ok;
      }),
    );

  sch
    .command('delete')
    .description('delete a schedule (its runs stay)')
    .argument('<id>', 'schedule id')
    .action(
      wrap(async (id: string) => {
        await s.client().schedules.delete(id);
        s.print({ deleted: id }, () => `deleted ${id}\n`);
        return EXIT.ok;
      }),
    );
}
