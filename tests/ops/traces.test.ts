/**
 * One trace follows a node through the real processes (OTEL_EXPORTER_OTLP_ENDPOINT set): the
 * caller's W3C `traceparent` → the API's request span → the dispatcher's span for the node's
 * dispatch (parented on the run's stored context) → the tool worker's BullMQ process span →
 * the tool call's span; an LlmCall's model call carries the GenAI attributes. The spans are
 * captured by an OTLP/HTTP (JSON) receiver this test owns; every process exports to it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '@flowline/graph';
import { startE2eCluster, waitFor, waitThenEcho, type E2eCluster } from '@flowline/testing';

const llmCall = {
  schemaVersion: 1,
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'summarise', kind: 'LlmCall', config: { systemPrompt: 'One sentence.', prompt: 'Summarise the data block.', inputBindings: { text: 'run.input.text' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'summarise' },
    { key: 'e2', from: 'summarise', to: 'end' },
  ],
} satisfies Json;

/** A span as the receiver keeps it: OTLP JSON fields plus the exporting process's service.name. */
interface CapturedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<CapturedSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

const valueOf = (v: OtlpAttribute['value']) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** A minimal OTLP/HTTP JSON trace receiver: POST /v1/traces, every span kept. */
async function startReceiver(): Promise<{ url: string; spans: CapturedSpan[]; close(): Promise<void> }> {
  const spans: CapturedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('traces across the cluster', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let c: E2eCluster;

  beforeAll(async () => {
    receiver = await startReceiver();
    c = await startE2eCluster({
      dispatchers: 1,
      toolWorkers: 1,
      llmWorkers: 1,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', LOG_LEVEL: 'debug' },
    });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') {
      process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
      process.stdout.write(`${JSON.stringify(receiver.spans.map((s) => [s.service, s.name, s.traceId, s.spanId, s.parentSpanId]))}\n`);
    }
  });

  /** The span `id` once exported (a parent ends, and is exported, after its children). */
  const spanById = (id: string) =>
    waitFor(() => receiver.spans.find((s) => s.spanId === id) ?? null, { timeoutMs: 10_000, description: `span ${id} exported` });

  afterAll(async () => {
    await c?.close();
    await receiver?.close();
  });

  it("links the caller's traceparent, the API request, the node's dispatch and its tool call in one trace", async () => {
    const definitionId = await c.api.createDefinition('traced', waitThenEcho(10));
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const res = await fetch(`${c.api.baseUrl}/v1/definitions/${definitionId}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: JSON.stringify({ input: {} }),
    });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');

    const tool = await waitFor(
      () => receiver.spans.find((s) => s.name === 'execute_tool echo' && s.attributes['flowline.run.id'] === runId) ?? null,
      { timeoutMs: 20_000, description: "the echo node's tool span" },
    );
    const consumer = await spanById(tool.parentSpanId);
    const dispatch = await spanById(consumer.parentSpanId);
    const request = await spanById(dispatch.parentSpanId);

    expect(tool).toMatchObject({ service: 'worker-tool', traceId, attributes: { 'gen_ai.tool.name': 'echo', 'flowline.node.key': 'echo' } });
    expect(consumer).toMatchObject({ service: 'worker-tool', traceId, name: 'process node.tool', kind: 5 /* CONSUMER */ });
    expect(dispatch).toMatchObject({
      service: 'dispatcher',
      traceId,
      name: 'dispatch Tool',
      kind: 4 /* PRODUCER */,
      attributes: { 'flowline.run.id': runId, 'flowline.node.key': 'echo', 'flowline.invocation.id': tool.attributes['flowline.invocation.id'] },
    });
    expect(request).toMatchObject({ service: 'api', traceId, kind: 2 /* SERVER */, parentSpanId: callerSpanId });
    expect(request.name).toMatch(/^POST \/v1\/definitions\/.+\/runs$/);
    // the node's lines in the worker's log carry its ids and the trace id
    const line = await waitFor(
      () =>
        c.lines
          .filter((l) => l.includes('[worker-tool') && l.includes('tool invocation finished') && l.includes(runId))
          .map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>)
          .find((l) => l.nodeKey === 'echo') ?? null,
      { timeoutMs: 10_000, description: "the echo node's log line" },
    );
    expect(line).toMatchObject({ runId, nodeKey: 'echo', invocationId: tool.attributes['flowline.invocation.id'], trace_id: traceId });
  }, 90_000);

  it("gives an LlmCall's model call the GenAI attributes, in the node's trace", async () => {
    const definitionId = await c.api.createDefinition('traced-llm', llmCall);
    const runId = await c.api.startRun(definitionId, { text: 'Oslo is a city.' });
    await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    const node = await waitFor(
      () => receiver.spans.find((s) => s.name === 'node LlmCall' && s.attributes['flowline.run.id'] === runId) ?? null,
      { timeoutMs: 20_000, description: "the LlmCall's node span" },
    );
    const chat = await waitFor(() => receiver.spans.find((s) => s.parentSpanId === node.spanId && s.name.startsWith('chat ')) ?? null, {
      timeoutMs: 10_000,
      description: 'the model call span',
    });
    expect(chat).toMatchObject({
      service: 'worker-llm',
      traceId: node.traceId,
      kind: 3 /* CLIENT */,
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.system': 'scripted' },
    });
    expect(chat.name).toBe(`chat ${String(chat.attributes['gen_ai.request.model'])}`);
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // the node's span continues the dispatch of its run, which continues the API request
    const consumer = await spanById(node.parentSpanId);
    expect(consumer).toMatchObject({ service: 'worker-llm', name: 'process node.llm', traceId: node.traceId });
    const dispatch = await spanById(consumer.parentSpanId);
    expect(dispatch).toMatchObject({ service: 'dispatcher', name: 'dispatch LlmCall', traceId: node.traceId, attributes: { 'flowline.run.id': runId } });
    expect(await spanById(dispatch.parentSpanId)).toMatchObject({ service: 'api', kind: 2 /* SERVER */, traceId: node.traceId });
  }, 90_000);
});
