/**
 * The lanes' BullMQ telemetry against real Redis, with an in-memory span exporter: a job held
 * in the dispatch window keeps its dispatch span's context, and the worker's `process` span
 * continues it around the lane's `run` (the span active there, the parent of a lane's node
 * spans); BullMQ's polling spans are not recorded, nor the job's return value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ROOT_CONTEXT, trace, type SpanContext } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { silent, testLaneErrors, toolItem } from './lane-fixtures';
import { cleanupRedisPrefix, testRedisUrl, uniquePrefix, waitFor } from '@flowline/testing';
import { closeLaneQueues, createLaneQueues, createLaneWorker, laneTelemetry, WindowStore, type LaneQueues } from '../src/index';

const redisUrl = testRedisUrl();
const prefix = uniquePrefix();
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let redis: Redis;
let queues: LaneQueues;

beforeAll(() => {
  provider.register();
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  queues = createLaneQueues(redis, prefix);
});

afterAll(async () => {
  await closeLaneQueues(queues);
  await cleanupRedisPrefix(prefix, redisUrl);
  redis.disconnect();
  await provider.shutdown();
  trace.disable();
});


describe('lane telemetry', () => {
  it("continues a held job's dispatch span in the worker's process span, recording neither polls nor the return value", async () => {
    const telemetry = laneTelemetry();
    const dispatch = trace.getTracer('test').startSpan('dispatch Tool');
    const item = toolItem();
    const window = new WindowStore(redis, prefix);
    const facts = await window.hold('tool', [{ tenantId: 't1', item, trace: telemetry.contextManager.getMetadata(trace.setSpan(ROOT_CONTEXT, dispatch)) }]);
    const jobs = await window.release('tool', facts.version, [{ tenantId: 't1', count: 1 }], facts.state);
    expect(jobs).toHaveLength(1);
    dispatch.end();
    await queues.tool.addBulk(jobs!);

    let activeInRun: { invocationId: string; span: SpanContext | undefined } | null = null;
    const worker = createLaneWorker({
      lane: 'tool',
      redis,
      logger: silent,
      prefix,
      concurrency: 1,
      telemetry,
      errors: testLaneErrors,
      unexpectedFailureReason: 'the test lane failed',
      async run(ran) {
        activeInRun = { invocationId: ran.invocationId, span: trace.getActiveSpan()?.spanContext() };
        return { result: { text: 'the node output document' } };
      },
    });
    try {
      await worker.start();
      const processed = await waitFor(() => exporter.getFinishedSpans().find((s) => s.name === 'process node.tool') ?? null, {
        timeoutMs: 10_000,
        description: 'the process span',
      });
      expect(processed.spanContext().traceId).toBe(dispatch.spanContext().traceId);
      expect(processed.parentSpanContext?.spanId).toBe(dispatch.spanContext().spanId);
      // the lane's run executes inside the process span
      expect(activeInRun).toEqual({ invocationId: item.invocationId, span: processed.spanContext() });
      expect(processed.events.map((e) => e.name)).toContain('job completed');
      expect(processed.events.every((e) => e.attributes?.['bullmq.job.result'] === undefined)).toBe(true);
      expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.attributes, s.events]))).not.toContain('the node output document');
    } finally {
      await worker.stop();
    }
    // the worker polled (getNextJob) and closed: neither left a span
    expect(new Set(exporter.getFinishedSpans().map((s) => s.name))).toEqual(new Set(['dispatch Tool', 'process node.tool']));
  });
});
