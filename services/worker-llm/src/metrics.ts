/**
 * The LLM worker's engine metrics (served on its ops port): provider admission and tokens.
 * Each model call costs one histogram observe and at most three counter increments.
 *
 * - `flowline_provider_admission_wait_seconds{provider}`: time a call waited for provider capacity (0 when none)
 * - `flowline_provider_admission_waits_total{provider}`: calls that had to wait for capacity
 * - `flowline_provider_tokens_total{provider,direction}`: tokens the provider reported, direction input / output
 */
import type { Registry } from 'prom-client';
import { metricsOn } from '@flowline/runtime';
import type { LlmUsage } from './providers/types';

/** The hooks the worker calls on each model call; {@link NO_LLM_METRICS} without an ops port. */
export interface LlmWorkerMetrics {
  /** a call was admitted after `waitedMs` (0: at once) */
  admitted(provider: string, waitedMs: number): void;
  /** the provider answered with `usage` */
  usage(provider: string, usage: LlmUsage): void;
}

export const NO_LLM_METRICS: LlmWorkerMetrics = { admitted() {}, usage() {} };

/** Registers the LLM worker's metrics on `registry`. */
export function createLlmWorkerMetrics(registry: Registry): LlmWorkerMetrics {
  const metric = metricsOn(registry);
  const wait = metric.histogram(
    'flowline_provider_admission_wait_seconds',
    'time a model call waited for provider capacity (concurrency, tokens per minute, cool-down), seconds',
    [0, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    ['provider'],
  );
  const waits = metric.counter('flowline_provider_admission_waits_total', 'model calls that had to wait for provider capacity', ['provider']);
  const tokens = metric.counter('flowline_provider_tokens_total', 'tokens the provider reported, by direction (input, output)', ['provider', 'direction']);
  return {
    admitted(provider, waitedMs) {
      wait.observe({ provider }, waitedMs / 1000);
      if (waitedMs > 0) waits.inc({ provider });
    },
    usage(provider, u) {
      if (u.inputTokens) tokens.inc({ provider, direction: 'input' }, u.inputTokens);
      if (u.outputTokens) tokens.inc({ provider, direction: 'output' }, u.outputTokens);
    },
  };
}
