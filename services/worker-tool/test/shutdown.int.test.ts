import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import { returnValueOf, toolItem } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
const serviceDir = fileURLToPath(new URL('..', import.meta.url));

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
}

async function startWorker(graceMs: number): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serviceDir,
    env: { ...process.env, REDIS_URL: url, QUEUE_PREFIX: prefix, WF_TEST_TOOLS: '1', SHUTDOWN_GRACE_MS: String(graceMs), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => output.includes('worker-tool ready'), { timeoutMs: 20_000, description: `worker ready; output so far: ${output}` });
  return { child, exited };
}

describe('worker-tool process shutdown', () => {
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
