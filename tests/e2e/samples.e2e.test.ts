/**
 * The sample definitions of `scripts/samples` (seeded by `npm start`, offered by the editor's
 * "Start from"): each parses with no error and no warning, carries a `defaultInput` its
 * schemas accept, and runs to Completed from that input on a whole cluster with the
 * built-in scripted LLM provider and no other setup.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGraph, parseJsonExact, validateJson, type Graph } from '@flowline/graph';
import { createToolRegistry } from '@flowline/tools';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';

const samplesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'samples');

interface Sample {
  file: string;
  name: string;
  description: string;
  graph: unknown;
}

const samples: Sample[] = readdirSync(samplesDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...(parseJsonExact(readFileSync(join(samplesDir, file), 'utf8')) as Omit<Sample, 'file'>) }));

async function parsed(doc: unknown): Promise<{ graph: Graph | null; errors: unknown[]; warnings: unknown[] }> {
  const tools = (await createToolRegistry({})).asParserCatalog();
  const r = parseGraph(doc, { maxNodes: 200, tools });
  return { graph: r.ok ? r.graph : null, errors: r.ok ? [] : r.errors, warnings: r.warnings };
}

describe('the samples', () => {
  it('are several, each with a name and a description', () => {
    expect(samples.length).toBeGreaterThanOrEqual(8);
    for (const s of samples) {
      expect(s.name, s.file).toMatch(/\S/);
      expect(s.description, s.file).toMatch(/\S.*\.$/);
    }
    expect(new Set(samples.map((s) => s.name)).size).toBe(samples.length);
  });

  it.each(samples.map((s) => [s.file, s] as const))('%s parses with no error and no warning', async (_f, s) => {
    const r = await parsed(s.graph);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it.each(samples.map((s) => [s.file, s] as const))('%s carries a default input that its input schemas accept, and needs nobody to answer', async (_f, s) => {
    const { graph } = await parsed(s.graph);
    const start = graph!.nodes.find((n) => n.kind === 'Start')!;
    expect(start.config.defaultInput, 'a one-click Start dialog').toBeDefined();
    for (const schema of [graph!.inputSchema, start.config.inputSchema]) {
      if (schema) expect(validateJson(schema, start.config.defaultInput)).toEqual({ valid: true });
    }
    expect(graph!.nodes.filter((n) => n.kind === 'ChatInput' || n.kind === 'Loop' || n.kind === 'Subworkflow')).toEqual([]);
  });
});

describe('every sample on a whole cluster with the scripted LLM provider', () => {
  let c: E2eCluster;

  beforeAll(async () => {
    // LLM_BASE_URL empty = unset: the built-in scripted provider answers, whatever the shell says
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1, env: { LLM_BASE_URL: '' } });
  }, 90_000);

  afterAll(async () => {
    await c?.close();
  });

  it.each(samples.map((s) => [s.file, s] as const))('%s runs to Completed from its default input', async (_f, s) => {
    const id = await c.api.createDefinition(s.name, s.graph);
    const chat = (s.graph as { kind?: string }).kind === 'Chat';
    let runId: string;
    if (chat) {
      // a Chat graph answers conversation messages: the message text is the run input's `text`
      const sent = await c.api.send('POST', `/v1/conversations/sample-${randomUUID()}/messages`, { definitionId: id, text: 'hello', requestId: randomUUID() });
      expect(sent.status).toBe(202);
      runId = sent.body.runId as string;
    } else {
      const started = await c.api.send('POST', `/v1/definitions/${id}/runs`, { requestId: randomUUID() });
      expect(started.status).toBe(202);
      runId = started.body.runId as string;
    }
    const done = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 45_000, `${s.file} terminal`);
    expect({ status: done.run.status, reason: done.run.reason }).toEqual({ status: 'Completed', reason: null });
    expect(done.output).toMatchObject({ outcome: expect.any(String) });
  }, 60_000);
});
