import { describe, expect, it } from 'vitest';
import { activeTraceId, activeTraceParent, startSpan, tracingEnabled, withSpan } from './tracing';

// This process never calls initTracing: what every hot path sees with OTEL_EXPORTER_OTLP_ENDPOINT unset.
describe('tracing off', () => {
  it('creates no span: startSpan answers undefined and withSpan hands back the very promise of its callback', async () => {
    expect(tracingEnabled()).toBe(false);
    expect(startSpan('dispatch Tool')).toBeUndefined();
    const work = Promise.resolve(42);
    let seen: unknown = 'unset';
    const out = withSpan('execute_tool echo', {}, (span) => {
      seen = span;
      return work;
    });
    expect(out).toBe(work);
    expect(seen).toBeUndefined();
    expect(await out).toBe(42);
  });

  it('stores and logs no trace context', () => {
    expect(activeTraceParent()).toBeNull();
    expect(activeTraceId()).toBeUndefined();
  });
});
