/**
 * Lane queues against real Redis: idempotent enqueue, key layout, and CONTRACT §1.2 across
 * Redis — a work item and a work return holding numbers a double cannot hold cross BullMQ
 * (which writes with JSON.stringify and reads with JSON.parse) and the wake channel exact;
 * a job whose call never logs costs no child logger.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { JsonNumber, type WorkItem } from '@flowline/graph';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import {
  closeLaneQueues,
  createLaneQueues,
  createLaneWorker,
  enqueueWork,
  parseMessage,
  parseWorkItem,
  parseWorkReturn,
  wakeChannel,
  wakeMessageSchema,
  type LaneQueues,
  type WakeMessage,
  type WorkReturn,
} from '../src/index';
import { testLaneErrors, toolItem } from './lane-fixtures';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();

const workItem = (lane: 'llm' | 'tool', invocationId: string): WorkItem =>
  toolItem({ lane, runId: 'run-1', invocationId, ...(lane === 'tool' ? {} : { nodeKey: 'ask', kind: 'LlmCall' }) });

const BIG = '9007199254740993';
const big = (text = BIG) => new JsonNumber(text);

/** A tool work item whose config and input document hold numbers a double cannot hold. */
function exactItem(invocationId: string): WorkItem {
  return {
    ...workItem('tool', invocationId),
    nodeKey: 'echo',
    config: { toolName: 'echo', arguments: { n: big('-123456789012345678901234567890') } } as never,
    input: {
      run: { input: { big: big() } },
      upstream: { start: { status: 'succeeded', attempt: 1, branch: null, output: { input: { big: big() } } } },
      input: { status: 'succeeded', attempt: 1, branch: null, output: { d: big('0.1000000000000000055511151231257827') } },
    } as never,
  };
}

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silent,
};

describe('lane queues against real Redis', () => {
  let redis: Redis;
  let queues: LaneQueues;

  beforeAll(() => {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    queues = createLaneQueues(redis, prefix);
  });

  afterAll(async () => {
    await closeLaneQueues(queues);
    await redis.quit();
    await cleanupRedisPrefix(prefix, redisUrl);
  });

  it('creates one job per invocation id when the same items are added twice', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await enqueueWork(queues, [workItem('tool', a), workItem('llm', b)]);
    await enqueueWork(queues, [workItem('tool', a), workItem('llm', b)]);

    expect(await queues.tool.getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(await queues.llm.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const job = await queues.tool.getJob(a);
    expect(job?.data.invocationId).toBe(a);
    expect(job?.opts.attempts).toBe(1);
  });

  it('keeps every key of a lane under the hash-tagged prefix', async () => {
    const keys = await redis.keys(`${prefix}:node.tool:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(prefix))).toBe(true);
  });

  it('reads back a work item with big numbers exactly as it was enqueued', async () => {
    const item = exactItem(randomUUID());
    await enqueueWork(queues, [item]);
    const job = await queues.tool.getJob(item.invocationId);
    // the ids stay readable in the wire form
    expect(job?.data).toMatchObject({ runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId });
    const parsed = parseWorkItem(job?.data);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(item);
  });

  it('returns a worker outcome with big numbers exactly, in the stored return value and in the wake report', async () => {
    const reports: WakeMessage[] = [];
    const sub = redis.duplicate();
    await sub.subscribe(wakeChannel(prefix));
    sub.on('message', (_c: string, raw: string) => {
      const m = parseMessage(wakeMessageSchema, raw);
      if (m?.ret) reports.push(m);
    });
    const worker = createLaneWorker({
      lane: 'tool',
      redis,
      logger: silent,
      prefix,
      concurrency: 1,
      // the shell dates the outcome by this clock: started (picked up) and finished at 7
      now: () => 7,
      errors: { cancelled: () => new Error('cancelled'), timeout: () => new Error('timeout'), interrupted: () => new Error('interrupted') },
      unexpectedFailureReason: 'broke',
      async run(item) {
        return { result: { echoed: item.input.run.input, more: big('1e400') } } as never;
      },
    });
    const item = exactItem(randomUUID());
    const expected: WorkReturn = {
      runId: item.runId,
      nodeKey: item.nodeKey,
      invocationId: item.invocationId,
      outcome: { ok: true, output: { result: { echoed: { big: big() }, more: big('1e400') } } as never, startedAt: 7, finishedAt: 7 },
    };
    try {
      await worker.start();
      await enqueueWork(queues, [item]);
      await waitFor(async () => (await queues.tool.getJob(item.invocationId))?.finishedOn !== undefined, {
        timeoutMs: 10_000,
        description: 'job finished',
      });
      // read back from Redis as a dispatcher's in-flight check does
      const raw = await redis.hget(`${prefix}:node.tool:${item.invocationId}`, 'returnvalue');
      const stored = parseWorkReturn(JSON.parse(raw!));
      expect(stored.success).toBe(true);
      expect(stored.data).toEqual(expected);
      // (the worker also takes the job the test above left waiting)
      const report = await waitFor(() => reports.find((r) => r.ret?.invocationId === item.invocationId) ?? false, {
        timeoutMs: 10_000,
        description: 'wake report',
      });
      expect(report.ret).toEqual(expected);
    } finally {
      await worker.stop();
      await sub.quit();
    }
  });

  it('makes no child logger for a job whose call does not log, and writes its debug line with the job ids', async () => {
    const children: Record<string, unknown>[] = [];
    const debug: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      debug: (obj: Record<string, unknown>, msg: string) => void debug.push({ obj, msg }),
      info() {},
      warn() {},
      error() {},
      child(bindings: Record<string, unknown>) {
        children.push(bindings);
        return logger;
      },
    };
    const worker = createLaneWorker({ lane: 'tool', redis, logger, prefix, concurrency: 1, errors: testLaneErrors, unexpectedFailureReason: 'broke', run: async () => ({ done: true }) });
    const item = toolItem({ attempt: 2 });
    try {
      await worker.start();
      await enqueueWork(queues, [item]);
      await waitFor(() => debug.some((d) => d.obj.invocationId === item.invocationId), { timeoutMs: 10_000, description: 'the job debug line' });
    } finally {
      await worker.stop();
    }
    expect(children).toEqual([]);
    expect(debug.find((d) => d.obj.invocationId === item.invocationId)).toEqual({
      obj: { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId, attempt: 2, kind: 'Tool', ok: true, failureClass: 'None', durationMs: expect.any(Number) as number },
      msg: 'tool invocation finished',
    });
  });
});
