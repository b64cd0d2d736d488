import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeLaneQueues,
  createLaneQueues,
  enqueueWork,
  parseMessage,
  publishCancellations,
  wakeChannel,
  wakeMessageSchema,
  type WakeMessage,
  type LaneQueues,
} from '@flowline/queue';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import type { Json } from '@flowline/graph';
import { createToolRegistry, type ToolDefinition } from '@flowline/tools';
import { createToolWorker, type ToolWorker } from '../src/worker';
import { returnValueOf, toolItem } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();

describe('tool worker (in-process, real Redis)', () => {
  let redis: Redis;
  let producer: Redis;
  let listener: Redis;
  let queues: LaneQueues;
  let toolWorker: ToolWorker;
  const wakes: string[] = [];
  const reports: WakeMessage[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    redis = new Redis(url, { maxRetriesPerRequest: null });
    producer = new Redis(url, { maxRetriesPerRequest: null });
    listener = new Redis(url);
    await listener.subscribe(wakeChannel(prefix));
    listener.on('message', (_channel: string, raw: string) => {
      const message = parseMessage(wakeMessageSchema, raw);
      if (message?.runId) wakes.push(message.runId);
      if (message) reports.push(message);
    });
    // `context` answers the facts its context carries (never the signal or the logger)
    const context: ToolDefinition = {
      name: 'context', description: 'answers its context', argumentsSchema: { type: 'object' }, requiresAllowedUrls: false,
      run: (_args, c) => ({ runId: c.runId, nodeKey: c.nodeKey, attempt: c.attempt, invocationId: c.invocationId, idempotencyKey: c.idempotencyKey, input: c.input as unknown as Json }),
    };
    const registry = await createToolRegistry({ testTools: true, extraTools: [context] });
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
    toolWorker = createToolWorker({ redis, registry, logger, prefix, concurrency: 4, shutdownGraceMs: 2_000 });
    await toolWorker.start();
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await toolWorker.stop();
    await closeLaneQueues(queues);
    await Promise.all([redis.quit(), producer.quit(), listener.quit()]);
    await cleanupRedisPrefix(prefix, url);
  });

  it('returns the echo result as the job return value and wakes the run', async () => {
    const item = toolItem({ toolName: 'echo', arguments: { a: 1 } });
    await enqueueWork(queues, [item]);
    const value = await returnValueOf(queues, item.invocationId);
    expect(value).toMatchObject({ runId: item.runId, nodeKey: 'tool1', invocationId: item.invocationId });
    expect(value.outcome).toMatchObject({ ok: true, output: { result: { a: 1 } } });
    expect(value.outcome.startedAt).toBeTypeOf('number');
    await waitFor(() => wakes.includes(item.runId), { description: 'wake for the run' });
    // the run's dispatcher learns the outcome from that message; a quick call sends no start of its own
    const mine = reports.filter((r) => r.runId === item.runId);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.ret).toEqual(value);
    expect(mine[0]!.started).toBeUndefined();
  });

  it("hands the tool its run, node, attempt, invocation, input document and the node's idempotency key on every attempt", async () => {
    const first = toolItem({ toolName: 'context' }, { nodeKey: 'charge' });
    const retry = toolItem({ toolName: 'context' }, { runId: first.runId, nodeKey: 'charge', attempt: 2 });
    await enqueueWork(queues, [first]);
    const a = await returnValueOf(queues, first.invocationId);
    await enqueueWork(queues, [retry]);
    const b = await returnValueOf(queues, retry.invocationId);
    const key = `${first.runId}:charge`;
    expect(a.outcome).toMatchObject({
      ok: true,
      output: { result: { runId: first.runId, nodeKey: 'charge', attempt: 1, invocationId: first.invocationId, idempotencyKey: key, input: first.input } },
    });
    expect(b.outcome).toMatchObject({ ok: true, output: { result: { attempt: 2, invocationId: retry.invocationId, idempotencyKey: key } } });
  });

  it('reports the start of a call still running after the start-report delay, then its outcome', async () => {
    const item = toolItem({ toolName: 'wait', arguments: { ms: 300 } });
    const before = Date.now();
    await enqueueWork(queues, [item]);
    await waitFor(() => reports.some((r) => r.runId === item.runId && r.started), { description: 'start report' });
    const started = reports.find((r) => r.runId === item.runId && r.started)!.started!;
    expect(started).toMatchObject({ invocationId: item.invocationId, nodeKey: item.nodeKey });
    expect(started.at).toBeGreaterThanOrEqual(before);
    expect(reports.some((r) => r.runId === item.runId && r.ret)).toBe(false);
    await waitFor(() => reports.some((r) => r.runId === item.runId && r.ret?.outcome.ok), { description: 'outcome report' });
  });

  it('binds arguments from the input document over literals of the same name', async () => {
    const item = toolItem({ toolName: 'echo', arguments: { q: 'literal', k: 1 }, argumentBindings: { q: 'input.output.q', c: 'run.input.city' } });
    await enqueueWork(queues, [item]);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({
      ok: true,
      output: { result: { q: 'from-upstream', k: 1, c: 'Oslo' } },
    });
  });

  it('fails test_fail NodeFailed below untilAttempt and echoes on that attempt', async () => {
    const early = toolItem({ toolName: 'test_fail', arguments: { untilAttempt: 2 } }, { attempt: 1 });
    const late = toolItem({ toolName: 'test_fail', arguments: { untilAttempt: 2 } }, { attempt: 2 });
    await enqueueWork(queues, [early, late]);
    expect((await returnValueOf(queues, early.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'NodeFailed' });
    expect((await returnValueOf(queues, late.invocationId)).outcome).toMatchObject({ ok: true, output: { result: { untilAttempt: 2 } } });
  });

  it('reports Timeout without running the tool when the deadline has passed', async () => {
    const item = toolItem({ toolName: 'counter', arguments: { key: 'never' } }, { deadlineAt: Date.now() - 1 });
    await enqueueWork(queues, [item]);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'Timeout' });
  });

  it('aborts a running call with Timeout when the deadline arrives', async () => {
    const item = toolItem({ toolName: 'wait', arguments: { ms: 60_000 } }, { deadlineAt: Date.now() + 300 });
    await enqueueWork(queues, [item]);
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'Timeout' });
  });

  it('aborts an in-flight wait with Cancelled on a cancel message', async () => {
    const item = toolItem({ toolName: 'wait', arguments: { ms: 60_000 } });
    await enqueueWork(queues, [item]);
    await waitFor(async () => (await queues.tool.getJob(item.invocationId))?.isActive(), { description: 'job active' });
    await publishCancellations(producer, [{ invocationId: item.invocationId, reason: 'join First settled' }], prefix);
    const { outcome } = await returnValueOf(queues, item.invocationId);
    expect(outcome).toMatchObject({ ok: false, failureClass: 'Cancelled' });
    expect(outcome.ok === false && outcome.reason).toContain('join First settled');
  });

  it('fails ValidationFailed on arguments that break the tool schema, an unknown tool and an unresolved binding', async () => {
    const badArgs = toolItem({ toolName: 'wait', arguments: { ms: 'soon' } });
    const unknown = toolItem({ toolName: 'no_such_tool' });
    const unbound = toolItem({ toolName: 'echo', argumentBindings: { x: 'input.output.missing' } });
    await enqueueWork(queues, [badArgs, unknown, unbound]);
    for (const item of [badArgs, unknown, unbound]) {
      expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
    }
  });

  it('reports ValidationFailed for a payload that is not a work item but names its invocation', async () => {
    const item = toolItem({ toolName: 'echo' });
    await queues.tool.add('Tool', { ...item, attempt: 'one' } as never, { jobId: item.invocationId });
    expect((await returnValueOf(queues, item.invocationId)).outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
  });

  it('runs a job once per invocation id even when enqueued twice', async () => {
    const key = `idem-${Date.now()}`;
    const item = toolItem({ toolName: 'counter', arguments: { key } });
    await enqueueWork(queues, [item]);
    await returnValueOf(queues, item.invocationId);
    await enqueueWork(queues, [item]);
    const second = toolItem({ toolName: 'counter', arguments: { key } });
    await enqueueWork(queues, [second]);
    expect((await returnValueOf(queues, second.invocationId)).outcome).toMatchObject({ ok: true, output: { result: { key, count: 2 } } });
  });

  it('logs each invocation with its ids but never its arguments or input document', async () => {
    const item = toolItem(
      { toolName: 'test_fail', arguments: { untilAttempt: 2, token: 'arg-s3cret' } },
      { input: { run: { input: 'doc-s3cret' }, upstream: {}, input: null } },
    );
    await enqueueWork(queues, [item]);
    await returnValueOf(queues, item.invocationId);
    const lines = await waitFor(() => {
      const mine = logLines.filter((l) => l.includes(item.invocationId));
      return mine.length > 0 ? mine : null;
    });
    expect(lines.some((l) => l.includes(item.runId) && l.includes('"nodeKey":"tool1"'))).toBe(true);
    expect(logLines.join('\n')).not.toMatch(/s3cret/);
    // the per-invocation line is at debug: nothing per job at the default level (issue #19)
    const finished = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg === 'tool invocation finished');
    expect(finished.map((l) => l.level)).toEqual([20]);
  });
});
