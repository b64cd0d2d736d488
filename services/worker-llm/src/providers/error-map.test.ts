import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { LlmError } from '../errors';
import { classOfStatus, isCapacityRefusal, mapProviderError, retryAfterMsOf } from './error-map';

const live = new AbortController().signal;
const headers = (h: Record<string, string>) => new Headers(h);

describe('provider error mapping', () => {
  it('classes statuses: 408 Timeout, 429 and 5xx NodeFailed, other 4xx ValidationFailed', () => {
    expect(classOfStatus(408)).toBe('Timeout');
    expect(classOfStatus(429)).toBe('NodeFailed');
    expect(classOfStatus(503)).toBe('NodeFailed');
    expect(classOfStatus(400)).toBe('ValidationFailed');
    expect(classOfStatus(401)).toBe('ValidationFailed');
  });

  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    expect(retryAfterMsOf(headers({ 'retry-after-ms': '250' }), 0)).toBe(250);
    expect(retryAfterMsOf(headers({ 'retry-after': '2' }), 0)).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMsOf(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMsOf(headers({ 'retry-after': 'soon' }), 0)).toBeNull();
    expect(retryAfterMsOf(undefined, 0)).toBeNull();
  });

  it('maps a 429 to a rate-limited NodeFailed carrying its retry-after and never the provider text', () => {
    const e = mapProviderError(APIError.generate(429, { message: 'prompt-s3cret' }, 'prompt-s3cret', headers({ 'retry-after': '3' })), live);
    expect(e).toMatchObject({ failureClass: 'NodeFailed', rateLimited: true, retryAfterMs: 3000 });
    expect(e.message).not.toContain('s3cret');
  });

  it('maps a model that cannot be loaded for lack of memory to CapacityRejected (not retried), never quoting the provider', () => {
    const said = 'model requires more system memory (12.4 GiB) than is available (3.1 GiB) for prompt-s3cret';
    for (const status of [500, 503, 400]) {
      const e = mapProviderError(APIError.generate(status, { error: { message: said } }, said, headers({})), live);
      expect(e.failureClass).toBe('CapacityRejected');
      expect(e.retryable).toBe(false);
      expect(e.message).toBe(`the model provider cannot load the model for lack of capacity (HTTP ${status}): free capacity or pin another model`);
    }
    for (const text of ['CUDA out of memory. Tried to allocate 2.00 GiB', 'failed to load model', 'not enough GPU memory', 'insufficient memory for the KV cache']) {
      expect(isCapacityRefusal(text)).toBe(true);
    }
    for (const text of ['the prompt is too long', 'rate limit reached', 'model not found', 'invalid image']) expect(isCapacityRefusal(text)).toBe(false);
    // any other 5xx stays the retryable NodeFailed
    expect(mapProviderError(APIError.generate(503, { error: { message: 'busy' } }, 'busy', headers({})), live).failureClass).toBe('NodeFailed');
  });

  it('maps connection failures and client timeouts, and lets an aborted signal decide', () => {
    expect(mapProviderError(new APIConnectionTimeoutError(), live).failureClass).toBe('Timeout');
    expect(mapProviderError(new APIConnectionError({ message: 'x' }), live).failureClass).toBe('NodeFailed');
    const c = new AbortController();
    c.abort(new LlmError('Interrupted', 'the worker shut down during the call'));
    expect(mapProviderError(new APIConnectionError({ message: 'x' }), c.signal).failureClass).toBe('Interrupted');
    expect(mapProviderError(new Error('boom'), live)).toMatchObject({ failureClass: 'NodeFailed', message: 'the model call failed' });
  });
});
