/**
 * One trace follows a node through the real processes (OTEL_EXPORTER_OTLP_ENDPOINT set): the
 * caller's W3C `traceparent` → the API's request span → the dispatcher's span for the node's
 * dispatch (parented on the run's stored context) → the tool worker's BullMQ process span →
 * the tool call's span. The spans are captured by an OTLP/HTTP (JSON) receiver this test owns;
 * every process exports to it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, waitFor, waitThenEcho, type E2eCluster } from '@flowline/testing';

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
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', LOG_LEVEL: 'debug' },
    });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') {
      process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
      process.stdout.write(`${JSON.stringify(receiver.spans.map((s) => [s.service, s.name, s.traceId, s.spanId, s.parentSpanId]))}\n`);
    }
  });

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
    const byId = new Map(receiver.spans.map((s) => [s.spanId, s]));
    const parentOf = (s: CapturedSpan) => {
      const p = byId.get(s.parentSpanId);
      if (!p) throw new Error(`no span ${s.parentSpanId} (parent of ${s.name}) was exported`);
      return p;
    };
    const consumer = await waitFor(() => byId.get(tool.parentSpanId) ?? null, { timeoutMs: 10_000, description: "the tool span's parent" });
    const dispatch = await waitFor(() => byId.get(consumer.parentSpanId) ?? null, { timeoutMs: 10_000, description: "the process span's parent" });
    const request = parentOf(dispatch);

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
    const finished = c.lines.filter((l) => l.includes('[worker-tool') && l.includes('tool invocation finished') && l.includes(runId));
    const line = finished.map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>).find((l) => l.nodeKey === 'echo');
    expect(line).toMatchObject({ runId, nodeKey: 'echo', invocationId: tool.attributes['flowline.invocation.id'], trace_id: traceId });
  }, 90_000);
});
