/**
 * The hand-written pages stay true to the code: links resolve inside the repository, every
 * graph example validates, and the names the code can answer with — error codes, event
 * kinds, failure classes, statuses, live events — are each explained somewhere.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS, FAILURE_CLASSES, NODE_STATUSES, RUN_STATUSES, parseGraph, parseJsonExact } from '@flowline/graph';
import { LIVE_EVENTS, liveErrorCodeSchema } from '@flowline/queue/protocol';
import { createToolRegistry } from '@flowline/tools';
import { REPO_ROOT, codeBlocks, linkProblems, userDocs } from '../../scripts/docs/markdown-read';

const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** Every string literal code an API error class is built with (`super(409, 'Code'` or a constructor's `code: 'A' | 'B'`). */
function apiErrorCodes(): string[] {
  const codes = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(join(REPO_ROOT, dir))) {
      const rel = `${dir}/${name}`;
      if (statSync(join(REPO_ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
        const text = read(rel);
        for (const m of text.matchAll(/super\(\s*\d{3},\s*'(\w+)'/g)) codes.add(m[1]!);
        for (const m of text.matchAll(/constructor\(\s*code:\s*((?:'\w+'\s*\|?\s*)+)/g)) {
          for (const c of m[1]!.matchAll(/'(\w+)'/g)) codes.add(c[1]!);
        }
      }
    }
  };
  walk('services/api/src');
  return [...codes].sort();
}

describe('the documentation', () => {
  it('links only inside the repository (or to http(s) addresses), to files and anchors that exist', () => {
    expect(linkProblems(userDocs())).toEqual([]);
  });

  it('never sends readers to the contract outside the repository', () => {
    for (const file of userDocs()) {
      expect(read(file), file).not.toMatch(/\.\.\/shared|shared\/CONTRACT|CONTRACT\.md/);
    }
  });

  it('gives only graph examples that validate with no error and no warning', async () => {
    const tools = (await createToolRegistry({})).asParserCatalog();
    let graphs = 0;
    for (const file of userDocs()) {
      for (const block of codeBlocks(file, 'json')) {
        const doc = parseJsonExact(block) as { nodes?: unknown; graph?: unknown };
        const graph = doc && typeof doc === 'object' && Array.isArray(doc.nodes) ? doc : null;
        if (graph === null) continue;
        graphs++;
        const r = parseGraph(graph, { maxNodes: 200, tools });
        expect({ file, errors: r.ok ? [] : r.errors, warnings: r.warnings }).toEqual({ file, errors: [], warnings: [] });
      }
    }
    expect(graphs).toBeGreaterThanOrEqual(1);
  });

  it('explains every run status, node status, failure class and event kind in the concepts page', () => {
    const concepts = read('docs/concepts.md');
    const missing = [...RUN_STATUSES, ...NODE_STATUSES, ...FAILURE_CLASSES, ...EVENT_KINDS].filter((name) => !concepts.includes(`\`${name}\``));
    expect(missing, 'add these to docs/concepts.md').toEqual([]);
  });

  it('lists every error code the API answers with, and every live event and refusal code, in the API guide', () => {
    const guide = read('docs/api.md');
    const names = [...apiErrorCodes(), ...Object.keys(LIVE_EVENTS), ...liveErrorCodeSchema.options];
    expect(apiErrorCodes().length).toBeGreaterThan(15);
    const missing = names.filter((name) => !guide.includes(`\`${name}\``));
    expect(missing, 'add these to docs/api.md').toEqual([]);
  });

  it('ships a tool module example that the registry loads and runs', async () => {
    const registry = await createToolRegistry({ modules: [join(REPO_ROOT, 'docs/examples/text-tools.mjs')] });
    expect(registry.catalog().map((t) => t.name)).toContain('word_count');
    const signal = new AbortController().signal;
    const result = await registry.invoke('word_count', { text: 'durable graphs run on' }, { signal, allowedUrls: [], runId: 'r', nodeKey: 'n', input: { run: { input: null }, upstream: {}, input: null }, attempt: 1, invocationId: 'docs' });
    expect(result).toEqual({ words: 4, characters: 21 });
  });
});
