/**
 * `flowline definitions describe | render <file|id>`: a local graph file is checked by the
 * server's own parser (exit 1 with keyed errors when invalid); anything else is a
 * definition id, described or drawn by the API.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { describe as describeGraph, stringifyJsonExact, toDot, toMermaid, type GraphDescriptor } from '@flowline/graph';
import type { GraphDescription } from '@flowline/client';
import { fields, issueLine, pretty, table } from '../format';
import { EXIT } from '../io';
import { parseLocalGraph } from '../local-graph';
import type { Session, Wrap } from '../session';

/** A file the argument names (it exists, or it reads as a `.json` path), else a definition id. */
function isFile(arg: string, cwd: string | undefined): boolean {
  return /\.json$/i.test(arg) || existsSync(resolve(cwd ?? '.', arg));
}

export function registerGraphViews(defs: Command, s: Session, wrap: Wrap): void {
  /** The parsed local graph, its warnings on stderr. */
  const local = async (file: string) => {
    const g = await parseLocalGraph(file, s.io.cwd, s.io.env ?? {});
    for (const w of g.warnings) s.io.stderr(`warning ${issueLine(w)}\n`);
    return g.graph;
  };

  defs
    .command('describe')
    .description("describe a graph: its nodes with defaults filled in, edges, and an analysis (a local file is checked by the server's parser; exit 1 when invalid)")
    .argument('<file|id>', 'a graph document file (or a definition / sample holding it in `graph`), or a definition id')
    .addOption(new Option('--format <format>', 'text, or the descriptor as json').choices(['text', 'json']).default('text'))
    .action(
      wrap(async (source: string, o: { format: 'text' | 'json' }) => {
        const d: GraphDescriptor | GraphDescription = isFile(source, s.io.cwd)
          ? describeGraph(await local(source))
          : await s.client().definitions.describe(source);
        s.io.stdout(o.format === 'json' || s.json ? pretty(d) : describeText(d));
        return EXIT.ok;
      }),
    );

  defs
    .command('render')
    .description("draw a graph as a Mermaid flowchart or a Graphviz DOT digraph (a local file is checked by the server's parser; exit 1 when invalid)")
    .argument('<file|id>', 'a graph document file (or a definition / sample holding it in `graph`), or a definition id')
    .addOption(new Option('--format <format>', 'diagram syntax').choices(['mermaid', 'dot']).default('mermaid'))
    .action(
      wrap(async (source: string, o: { format: 'mermaid' | 'dot' }) => {
        if (isFile(source, s.io.cwd)) {
          const graph = await local(source);
          const text = o.format === 'dot' ? toDot(graph) : toMermaid(graph);
          s.print({ format: o.format, text, version: null }, () => text);
        } else {
          const r = await s.client().definitions.render(source, o.format);
          s.print(r, () => r.text);
        }
        return EXIT.ok;
      }),
    );
}

const list = (keys: readonly string[]) => (keys.length === 0 ? '-' : keys.join(', '));

/** The human form of a descriptor: a summary, the node table, the edge table. */
function describeText(d: GraphDescriptor | GraphDescription): string {
  const a = d.analysis;
  const summary = fields([
    ['kind', d.kind],
    ...('version' in d ? ([['version', d.version]] as Array<[string, number]>) : []),
    ['start', a.start],
    ['ends', list(a.ends)],
    ['size', `${a.nodeCount} nodes, ${a.edgeCount} edges, depth ${a.depth}`],
    ['fan-out', list(a.fanOut)],
    ['joins', list(a.joins)],
    ['routers', list(a.routers)],
    ['human waits', list(a.human)],
    ['child runs', list(a.children)],
    ['tools', list(a.tools)],
  ]);
  const nodes = table(
    ['key', 'kind', 'label', 'join', 'attempts', 'lane', 'depth'],
    d.nodes.map((n) => [
      n.key,
      n.kind,
      n.label === n.key ? '' : n.label,
      typeof n.joinPolicy === 'object' ? `quorum ${n.joinPolicy.quorum}` : n.joinPolicy,
      n.maxAttempts,
      n.lane ?? (n.human ? 'person' : n.child ? 'child run' : 'inline'),
      n.depth,
    ]),
  );
  const edges = table(
    ['edge', 'from', 'to', 'kind', 'label', 'condition'],
    d.edges.map((e) => [
      e.key,
      e.from,
      e.to,
      e.kind,
      e.label,
      e.condition === null ? null : `${e.condition.path} ${e.condition.op}${e.condition.op.endsWith('Exists') ? '' : ` ${stringifyJsonExact(e.condition.value)}`}`,
    ]),
  );
  return `${summary}\n${nodes}\n${edges}`;
}
