import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor, type ServiceProcess } from '@flowline/testing';
import { returnValueOf, spawnToolWorker, toolItem } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
function startWorker(graceMs: number, env: Record<string, string> = {}) {
  return spawnToolWorker({ REDIS_URL: url, QUEUE_PREFIX: prefix, WF_TEST_TOOLS: '1', SHUTDOWN_GRACE_MS: String(graceMs), ...env });
}

let producer: Redis;
let queues: LaneQueues;

beforeAll(() => {
  producer = new Redis(url, { maxRetriesPerRequest: null });
  queues = createLaneQueues(producer, prefix);
});

afterAll(async () => {
  await closeLaneQueues(queues);
  await producer.quit();
  await cleanupRedisPrefix(prefix, url);
});

describe('worker-tool process shutdown', () => {
  it('exits 0 on SIGTERM when idle', async () => {
    const { child, exited } = await startWorker(1_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('lets an in-flight call finish within the grace period, then exits 0', async () => {
    const { child, exited } = await startWorker(20_000);
    const item = toolItem({ toolName: 'wait', arguments: { ms: 500 } });
    await enqueueWork(queues, [item]);
    await waitFor(async () => (await queues.tool.getJob(item.invocationId))?.isActive(), { description: 'job active' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: true, output: { result: { waitedMs: 500 } } });
  });

  it('interrupts a call still running when the grace period ends, reports Interrupted and exits 0', async () => {
    const { child, exited } = await startWorker(300);
    const item = toolItem({ toolName: 'wait', arguments: { ms: 60_000 } });
    await enqueueWork(queues, [item]);
    await waitFor(async () => (await queues.tool.getJob(item.invocationId))?.isActive(), { description: 'job active' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'Interrupted' });
  });
});

/** The worker's error-level log lines, parsed. */
function errorLines(w: ServiceProcess): Record<string, unknown>[] {
  return w
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.level === 50);
}

describe('worker-tool when a TOOL_MODULES tool leaks an asynchronous error (drain, then exit 1)', () => {
  const start = () => startWorker(20_000, { TOOL_MODULES: './test/fixtures/leaky-tools.ts' });

  it('fails the call whose resource emitted an unhandled error event (NodeFailed, ToolModuleFault), lets the call in flight finish, then exits 1', async () => {
    const w = await start();
    const slow = toolItem({ toolName: 'wait', arguments: { ms: 1_500 } });
    await enqueueWork(queues, [slow]);
    await waitFor(async () => (await queues.tool.getJob(slow.invocationId))?.isActive(), { description: 'the slow call is in flight' });
    const leaky = toolItem({ toolName: 'leak_event', arguments: {} });
    await enqueueWork(queues, [leaky]);

    expect((await returnValueOf(queues, leaky.invocationId)).outcome).toMatchObject({
      ok: false,
      failureClass: 'NodeFailed',
      reason: 'tool leak_event leaked an asynchronous error (Error) outside its call: ToolModuleFault',
    });
    expect((await returnValueOf(queues, slow.invocationId)).outcome).toMatchObject({ ok: true, output: { result: { waitedMs: 1_500 } } });
    expect(await w.exited).toBe(1);
    expect(errorLines(w)).toEqual([
      expect.objectContaining({ origin: 'uncaughtException', tool: 'leak_event', invocationId: leaky.invocationId, failedCall: true }),
    ]);
  });

  it('fails the call that left a rejection unhandled the same way, then exits 1', async () => {
    const w = await start();
    const leaky = toolItem({ toolName: 'leak_rejection', arguments: {} });
    await enqueueWork(queues, [leaky]);
    expect((await returnValueOf(queues, leaky.invocationId)).outcome).toMatchObject({
      ok: false,
      failureClass: 'NodeFailed',
      reason: expect.stringMatching(/^tool leak_rejection leaked an asynchronous error \(Error\) outside its call: ToolModuleFault$/),
    });
    expect(await w.exited).toBe(1);
    expect(errorLines(w)).toEqual([
      expect.objectContaining({ origin: 'unhandledRejection', tool: 'leak_rejection', invocationId: leaky.invocationId, failedCall: true }),
    ]);
  });
});
