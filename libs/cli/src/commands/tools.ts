/** `flowline tools`: the tool catalog. */
import type { Command } from 'commander';
import { table } from '../format';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';

export function registerTools(program: Command, s: Session, wrap: Wrap): void {
  program
    .command('tools')
    .description('the tools a Tool node may name')
    .action(
      wrap(async () => {
        const page = await s.client().tools.list();
        s.print(page, () =>
          table(
            ['name', 'allowedUrls', 'description'],
            page.items.map((t) => [t.name, t.requiresAllowedUrls ? 'required' : '', t.description]),
          ),
        );
        return EXIT.ok;
      }),
    );
}
