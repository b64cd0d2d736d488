/**
 * The canonical eight-node graph with its REAL Agent node, end to end through a whole
 * cluster of child processes (api, dispatcher, worker-tool, worker-llm) against the
 * fake OpenAI-compatible server: the Agent reads notes.md through `read_file`, then
 * answers `requiresReview` from the run input it sees in its upstream map.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '@flowline/graph';
import { startFakeLlm, type FakeLlmServer, nodeOf, type ApiClient } from '@flowline/testing';
import { canonicalEight } from '@flowline/graph/fixtures';
import { startLlmCluster, type LlmCluster } from './llm-cluster';

function canonicalWithAgent(): JsonObject {
  const doc = canonicalEight();
  const nodes = doc.nodes as JsonObject[];
  // The fixture binds lookup's path from a member the Agent's closed schema cannot carry.
  nodes.find((n) => n.key === 'lookup')!.config = { toolName: 'read_file', arguments: { path: 'notes.md' } };
  return doc;
}

describe('the canonical graph with its real Agent on a whole cluster', () => {
  let fake: FakeLlmServer;
  let c: LlmCluster;
  let api: ApiClient;

  beforeAll(async () => {
    fake = await startFakeLlm();
    fake.setHandler((req) => {
      const messages = req.body.messages as { role: string; content: string | null }[];
      if (!messages.some((m) => m.role === 'tool')) return { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.md' } }] };
      const user = messages.find((m) => m.role === 'user')?.content ?? '';
      return { content: JSON.stringify({ requiresReview: user.includes('"requiresReview": true') }) };
    });
    const files = mkdtempSync(join(tmpdir(), 'flowline-llm-e2e-'));
    writeFileSync(join(files, 'notes.md'), '# notes\nall good\n');
    c = await startLlmCluster(fake, { TOOL_FILES_ROOT: files });
    api = c.api;
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await fake?.close();
  });

  it('routes both branches on the Agent answer: lookup directly, review after a person approves', async () => {
    const definitionId = await api.createDefinition('canonical-agent', canonicalWithAgent());
    const [reviewed, direct] = await Promise.all([api.startRun(definitionId, { requiresReview: true }), api.startRun(definitionId, { requiresReview: false })]);

    await api.waitForRun(reviewed, (v) => v.run.status === 'WaitingForApproval', 45_000, 'review waits');
    await api.decide(reviewed, 'review', 'Approve');
    const [a, b] = await Promise.all([
      api.waitForRun(reviewed, (v) => v.run.status === 'Completed', 45_000, 'reviewed run completed'),
      api.waitForRun(direct, (v) => v.run.status === 'Completed', 45_000, 'direct run completed'),
    ]);
    expect(nodeOf(a, 'analyze')?.status).toBe('Succeeded');
    expect(nodeOf(a, 'lookup')?.status).toBe('Skipped');
    expect(nodeOf(b, 'review')?.status).toBe('Skipped');
    expect(nodeOf(b, 'lookup')?.status).toBe('Succeeded');
    // each Agent ran its tool loop: a read_file call, then the answer
    expect(fake.requests.filter((r) => r.body.model === 'fake-model')).toHaveLength(4);
    expect(a.output).toMatchObject({ outcome: 'completed' });
    expect(b.output).toMatchObject({ outcome: 'completed' });
  }, 120_000);
});
