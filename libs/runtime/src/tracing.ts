/**
 * OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. On: a Node tracer
 * provider (AsyncLocalStorage context, W3C trace-context propagation) exporting over OTLP/HTTP
 * (JSON) in batches to `<endpoint>/v1/traces`, the process named by `service.name`. Off:
 * nothing is registered, the global API stays the no-op one, and every helper here returns at
 * its first line — the hot paths guard on {@link tracingEnabled} so they create no span objects.
 *
 * One trace follows a node: the API's request span → the run row's stored `traceparent` → the
 * dispatcher's span per node dispatch (parented on it) → the BullMQ job (bullmq-otel's job
 * metadata) → the worker's process span and the node's execution span.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { z } from 'zod';

/** Tracing options (every service). */
export const tracingOptions = {
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .refine((v) => {
      try {
        return /^https?:$/.test(new URL(v).protocol);
      } catch {
        return false;
      }
    }, 'must be an http(s) URL')
    .optional()
    .describe('OTLP/HTTP collector base URL: spans are POSTed as OTLP JSON to its /v1/traces path (unset: tracing off, no cost)'),
};

let enabled = false;
let tracer: Tracer = trace.getTracer('flowline');

/** True once {@link initTracing} registered an exporter in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

export interface Tracing {
  enabled: boolean;
  /** flushes buffered spans and stops the exporter (register it with the shutdown) */
  shutdown(): Promise<void>;
}

/**
 * Sets up tracing for the process named `serviceName` when `endpoint` is set (the
 * OTEL_EXPORTER_OTLP_ENDPOINT option); call once, first thing in main. The batch processor
 * reads the standard OTEL_BSP_* variables (delay, queue and batch sizes) itself.
 */
export function initTracing(serviceName: string, endpoint: string | undefined): Tracing {
  if (endpoint === undefined || enabled) return { enabled, shutdown: async () => {} };
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // registers the AsyncLocalStorage context manager and the W3C trace-context propagator
  provider.register();
  tracer = trace.getTracer('flowline');
  enabled = true;
  return { enabled: true, shutdown: () => provider.shutdown() };
}

/** The tracer of Flowline's own spans (the no-op one while tracing is off). */
export function flowlineTracer(): Tracer {
  return tracer;
}

/** The W3C `traceparent` of the active span, or null (tracing off, or no span active). */
export function activeTraceParent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** A context whose remote parent is `traceParent` (a W3C `traceparent` value); the root context when null. */
export function contextOfTraceParent(traceParent: string | null): Context {
  if (traceParent === null) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
}

/** The trace id of the active span, or undefined (tracing off, or no span active). */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  return span?.spanContext().traceId;
}

/** Options of {@link withSpan}. */
export interface SpanOptions {
  attributes?: Attributes;
  /** @default SpanKind.INTERNAL */
  kind?: SpanKind;
  /** the parent context @default the active one */
  parent?: Context;
}

/**
 * Runs `fn` inside a new active span `name`, ending it when `fn` settles and marking it
 * errored (with the error's class only) when `fn` throws. Tracing off: calls `fn(undefined)`
 * and nothing else.
 */
export function withSpan<T>(name: string, o: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!enabled) return fn(undefined);
  const parent = o.parent ?? context.active();
  return tracer.startActiveSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      // the error's class only: a message may quote input (never prompts or documents in a span)
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'thrown' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Starts (without activating) a span `name` under `o.parent` (default: the active context); undefined while tracing is off. */
export function startSpan(name: string, o: SpanOptions = {}): Span | undefined {
  if (!enabled) return undefined;
  return tracer.startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, o.parent ?? context.active());
}

/** A context holding `span` as its active span (what a propagator injects into a carrier). */
export function contextWithSpan(span: Span): Context {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/** The context a request's `traceparent`/`tracestate` headers carry (the root context when none). */
export function contextOfHeaders(headers: Record<string, string | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

export { SpanKind, SpanStatusCode };
export type { Span, Attributes, Context };
