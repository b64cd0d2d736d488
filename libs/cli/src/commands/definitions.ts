/** `flowline definitions list | get | create | validate | disable | enable | describe | render`. */
import type { Command } from 'commander';
import { positiveInt, readGraphFile } from '../args';
import { fields, issueLine, pretty } from '../format';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';
import { registerGraphViews } from './graph-views';

export function registerDefinitions(program: Command, s: Session, wrap: Wrap): void {
  const defs = program.command('definitions').alias('defs').description('saved graphs');

  defs
    .command('list')
    .description('list definitions (newest first)')
    .option('--limit <n>', 'page size (the API clamps it to 200)', positiveInt)
    .option('--cursor <cursor>', 'the next page, from a previous listing')
    .action(
      wrap(async (o: { limit?: number; cursor?: string }) => {
        const page = await s.client().definitions.list({ ...(o.limit ? { limit: o.limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) });
        s.printPage(page, ['id', 'name', 'version', 'kind', 'nodes', 'updated'], (d) => [d.id, d.name, d.version, d.kind, d.nodeCount, d.updatedAt]);
        return EXIT.ok;
      }),
    );

  defs
    .command('get')
    .description('show a definition and its graph')
    .argument('<id>', 'definition id')
    .action(
      wrap(async (id: string) => {
        const d = await s.client().definitions.get(id);
        s.print(d, () =>
          fields([
            ['id', d.id],
            ['name', d.name],
            ['description', d.description],
            ['kind', d.kind],
            ['version', d.version],
            ['nodes', d.nodeCount],
            ['graphHash', d.graphHash],
            ['updated', d.updatedAt],
          ]) + `graph\n${pretty(d.graph)}`,
        );
        return EXIT.ok;
      }),
    );

  defs
    .command('create')
    .description('save a graph document as a new definition; prints its id')
    .argument('<name>', 'definition name')
    .argument('<graph.json>', 'graph document file (or a definition / sample holding it in `graph`)')
    .option('--description <text>', 'description')
    .action(
      wrap(async (name: string, file: string, o: { description?: string }) => {
        const graph = await readGraphFile(file, s.io.cwd);
        const d = await s.client().definitions.create({ name, graph, ...(o.description ? { description: o.description } : {}) });
        s.print(d, () => `${d.id}\n`);
        return EXIT.ok;
      }),
    );

  defs
    .command('validate')
    .description('check a graph document without saving it (exit 1 when invalid)')
    .argument('<graph.json>', 'graph document file (or a definition / sample holding it in `graph`)')
    .action(
      wrap(async (file: string) => {
        const graph = await readGraphFile(file, s.io.cwd);
        const r = await s.client().definitions.validate(graph);
        s.print(r, () =>
          [
            r.valid ? 'valid' : `invalid: ${r.errors.length} error${r.errors.length === 1 ? '' : 's'}`,
            ...r.errors.map(issueLine),
            ...r.warnings.map((w) => `warning ${issueLine(w)}`),
          ].join('\n') + '\n',
        );
        return r.valid ? EXIT.ok : EXIT.refused;
      }),
    );

  for (const verb of ['disable', 'enable'] as const) {
    defs
      .command(verb)
      .description(verb === 'disable' ? 'refuse new runs of a definition (live runs go on)' : 'accept new runs of a disabled definition again')
      .argument('<id>', 'definition id')
      .action(
        wrap(async (defId: string) => {
          const d = await s.client().definitions[verb](defId);
          s.print(d, () => `${d.id} ${d.enabled ? 'enabled' : 'disabled'}\n`);
          return EXIT.ok;
        }),
      );
  }

  registerGraphViews(defs, s, wrap);
}
