/**
 * A graph document read from a local file and checked by the server's own parser
 * (`@flowline/graph` parseGraph, lossless JSON) against the same limits a server with
 * this environment would apply: MAX_NODES_PER_DEFINITION, and the tool catalog of the
 * built-in tools plus WF_TEST_TOOLS and TOOL_MODULES.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseGraph, parseJsonExact, type Graph, type Issue, type ToolCatalog } from '@flowline/graph';
import { coreOptions, defineConfig, parseConfig, workerOptions } from '@flowline/runtime';
import { createToolRegistry } from '@flowline/tools';
import { LocalGraphInvalidError, UsageError } from './errors';

/** The options of a local check (read from the CLI's environment). */
export const localGraphConfigSchema = defineConfig({
  MAX_NODES_PER_DEFINITION: coreOptions.MAX_NODES_PER_DEFINITION,
  TOOL_MODULES: workerOptions.TOOL_MODULES,
  WF_TEST_TOOLS: z.enum(['0', '1']).default('0').describe('1 adds the test tools (test_fail) to the catalog'),
});

/** A parsed local graph and its warnings. */
export interface LocalGraph {
  graph: Graph;
  warnings: Issue[];
}

/**
 * Reads `path` (a graph document, or a definition / sample holding it in `graph`) and
 * parses it.
 * @throws UsageError when the file cannot be read, is not JSON, or the environment's options are invalid
 * @throws LocalGraphInvalidError with every keyed error when the graph is invalid
 */
export async function parseLocalGraph(path: string, cwd: string | undefined, env: Readonly<Record<string, string | undefined>>): Promise<LocalGraph> {
  let text: string;
  try {
    text = await readFile(resolve(cwd ?? '.', path), 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read graph ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  let value: unknown;
  try {
    value = parseJsonExact(text);
  } catch (err) {
    throw new UsageError(`graph ${path} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const doc = isWrapper(value) ? value.graph : value;
  const opts = await localParseOptions(env);
  const r = parseGraph(doc, opts);
  if (!r.ok) throw new LocalGraphInvalidError(path, r.errors, r.warnings);
  return { graph: r.graph, warnings: r.warnings };
}

/** A definition or sample: an object holding the document in `graph`, with no `nodes` of its own. */
function isWrapper(v: unknown): v is { graph: unknown } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !('nodes' in v) && 'graph' in v && typeof v.graph === 'object' && v.graph !== null;
}

async function localParseOptions(env: Readonly<Record<string, string | undefined>>): Promise<{ maxNodes: number; tools: ToolCatalog }> {
  const cfg = parseConfig(localGraphConfigSchema, { ...env });
  if (!cfg.ok) throw new UsageError(`invalid environment for a local graph check: ${cfg.issues.join('; ')}`);
  const modules = (cfg.value.TOOL_MODULES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let registry;
  try {
    registry = await createToolRegistry({ testTools: cfg.value.WF_TEST_TOOLS === '1', modules });
  } catch (err) {
    throw new UsageError(`cannot build the tool catalog: ${(err as Error).message}`, { cause: err });
  }
  return { maxNodes: cfg.value.MAX_NODES_PER_DEFINITION, tools: registry.asParserCatalog() };
}
