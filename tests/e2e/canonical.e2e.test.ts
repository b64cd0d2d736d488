import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeOf, startE2eCluster, type E2eCluster, canonicalWithTool } from '@flowline/testing';

describe('the canonical eight-node graph on a whole cluster', () => {
  let c: E2eCluster;
  let definitionId: string;

  beforeAll(async () => {
    const files = mkdtempSync(join(tmpdir(), 'flowline-e2e-'));
    writeFileSync(join(files, 'notes.md'), '# notes\nall good\n');
    c = await startE2eCluster({ env: { TOOL_FILES_ROOT: files } });
    definitionId = await c.api.createDefinition('canonical', canonicalWithTool());
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
  });

  it('completes both branches: the lookup branch on its own and the review branch once a person approves', async () => {
    const [reviewed, direct] = await Promise.all([
      c.api.startRun(definitionId, { requiresReview: true }),
      c.api.startRun(definitionId, { requiresReview: false }),
    ]);

    const waiting = await c.api.waitForRun(reviewed, (v) => v.run.status === 'WaitingForApproval', 30_000, 'review waits');
    expect(nodeOf(waiting, 'review')?.status).toBe('WaitingForApproval');
    await c.api.decide(reviewed, 'review', 'Approve');

    const [a, b] = await Promise.all([
      c.api.waitForRun(reviewed, (v) => v.run.status === 'Completed', 30_000, 'reviewed run completed'),
      c.api.waitForRun(direct, (v) => v.run.status === 'Completed', 30_000, 'direct run completed'),
    ]);
    expect(nodeOf(a, 'lookup')?.status).toBe('Skipped');
    expect(nodeOf(a, 'done')?.status).toBe('Succeeded');
    expect(nodeOf(b, 'review')?.status).toBe('Skipped');
    expect(nodeOf(b, 'lookup')?.status).toBe('Succeeded');
    expect(a.output).toMatchObject({ outcome: 'completed' });
    expect(b.output).toMatchObject({ outcome: 'completed' });
  }, 60_000);

  it('ends a reviewed run through the rejected edge when the person rejects', async () => {
    const runId = await c.api.startRun(definitionId, { requiresReview: true });
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'review waits');
    await c.api.decide(runId, 'review', 'Reject');
    const v = await c.api.waitForRun(runId, (r) => r.run.status === 'Completed', 30_000, 'rejected run completed');
    expect(nodeOf(v, 'fanout')?.status).toBe('Skipped');
    expect(nodeOf(v, 'done')?.status).toBe('Succeeded');
  }, 45_000);
});
