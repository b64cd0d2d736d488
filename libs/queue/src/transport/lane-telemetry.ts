/**
 * BullMQ telemetry of the lanes (bullmq-otel), for processes that trace (OTEL_EXPORTER_OTLP_ENDPOINT
 * set); without it no telemetry option is given and BullMQ runs its untraced path.
 *
 * A lane job carries its dispatch span's context as BullMQ telemetry metadata (set by the
 * dispatcher per job: a release adds many runs' jobs in one `addBulk`, so the bulk's own context
 * is no parent), and the worker's `process <queue>` CONSUMER span continues it. Two narrowings
 * of bullmq-otel, both in {@link laneTelemetry}:
 * - only job processing is traced: BullMQ's polls (`getNextJob`, blocking, several a second) and
 *   housekeeping (stalled checks, close) would each open a trace of their own;
 * - a finished job's event carries no `bullmq.job.result`: the return value holds the node's
 *   output document, which never leaves the engine in a span.
 */
import type { Telemetry } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';

/** The BullMQ span names that are recorded; the rest pass through without a span. */
const TRACED_OPERATIONS = ['process '] as const;
const JOB_RESULT_ATTRIBUTE = 'bullmq.job.result';

type OtelSpan = ReturnType<BullMQOtel['tracer']['startSpan']>;
type OtelContext = Parameters<OtelSpan['setSpanOnContext']>[0];
type SpanAttributes = Parameters<OtelSpan['setAttributes']>[0];

/** A span that records nothing and leaves the context as it is. */
const UNTRACED_SPAN: OtelSpan = {
  setSpanOnContext: (ctx: unknown) => ctx,
  setAttribute() {},
  setAttributes() {},
  addEvent() {},
  recordException() {},
  end() {},
} as unknown as OtelSpan;

/** BullMQ's telemetry interface, as lane workers and the dispatcher take it. */
export type LaneTelemetry = Telemetry;

/** The lanes' BullMQ telemetry; create it only once tracing is set up in the process. */
export function laneTelemetry(): LaneTelemetry {
  const otel = new BullMQOtel({ tracerName: 'flowline-lanes' });
  return {
    contextManager: otel.contextManager,
    tracer: {
      startSpan(name, options, ctx) {
        if (!TRACED_OPERATIONS.some((op) => name.startsWith(op))) return UNTRACED_SPAN;
        const span = otel.tracer.startSpan(name, options, ctx);
        return {
          setSpanOnContext: (c: OtelContext) => span.setSpanOnContext(c),
          setAttribute: (k: string, v: Parameters<OtelSpan['setAttribute']>[1]) => span.setAttribute(k, v),
          setAttributes: (a: SpanAttributes) => span.setAttributes(a),
          addEvent(event: string, attributes?: SpanAttributes) {
            if (attributes === undefined || !(JOB_RESULT_ATTRIBUTE in attributes)) return span.addEvent(event, attributes);
            const { [JOB_RESULT_ATTRIBUTE]: _omitted, ...rest } = attributes;
            span.addEvent(event, rest);
          },
          // the exception's class only: a message may quote input
          recordException: (e: Parameters<OtelSpan['recordException']>[0]) =>
            span.recordException(typeof e === 'string' ? 'Error' : { name: e.name ?? 'Error', message: e.name ?? 'Error' }),
          end: () => span.end(),
        } as OtelSpan;
      },
    },
  };
}
