/**
 * Provider errors → failure classes (CONTRACT §4): a timeout is Timeout; 5xx, 429 and
 * an unreachable server are NodeFailed (retryable); 408 is Timeout; any other 4xx is
 * ValidationFailed (the same request fails the same way); a model that cannot be loaded for
 * lack of memory is CapacityRejected (not retried). The reason names the HTTP status only —
 * never the provider's text, which may quote the prompt.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { LlmError, abortErrorOf } from '../errors';

/** `retry-after-ms`, or `retry-after` in seconds or as an HTTP date, in ms; null when absent or unreadable. */
export function retryAfterMsOf(headers: { get(name: string): string | null } | undefined, nowMs: number): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const raw = headers.get('retry-after');
  if (raw === null) return null;
  const trimmed = raw.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * What model servers say when a model cannot be loaded for lack of memory (Ollama's "model
 * requires more system memory … than is available", llama.cpp's and vLLM's out-of-memory and
 * "failed to load model" answers). Retrying sends the same request to the same full machine,
 * so such a refusal is CapacityRejected, not the retryable NodeFailed: only an operator
 * freeing capacity, or a node pinning another model, changes it. The text is matched here
 * and never repeated in the node's reason.
 */
const CAPACITY_REFUSAL =
  /requires more (system )?memory|not enough (system |gpu |v)?memory|insufficient (system |gpu |v)?memory|out of (gpu |v)?memory|cuda out of memory|failed to load (the )?model|unable to load (the )?model|cannot load (the )?model/i;

/** True when a provider's error text says the model cannot be loaded for lack of capacity. */
export function isCapacityRefusal(message: string): boolean {
  return CAPACITY_REFUSAL.test(message);
}

/** The failure class of an HTTP status from a provider. */
export function classOfStatus(status: number): LlmError['failureClass'] {
  if (status === 408) return 'Timeout';
  if (status === 429 || status >= 500) return 'NodeFailed';
  if (status >= 400) return 'ValidationFailed';
  return 'NodeFailed';
}

/** Maps anything a provider call threw to an LlmError. */
export function mapProviderError(error: unknown, signal: AbortSignal, nowMs: number = Date.now()): LlmError {
  if (error instanceof LlmError) return error;
  // Our own abort (deadline, cancel, shutdown) wins over whatever the client made of it.
  if (signal.aborted) return abortErrorOf(signal);
  if (error instanceof APIUserAbortError) return new LlmError('Cancelled', 'the model call was aborted');
  if (error instanceof APIConnectionTimeoutError) return new LlmError('Timeout', 'the model provider did not answer in time');
  if (error instanceof APIConnectionError) return new LlmError('NodeFailed', 'the model provider could not be reached', { cause: error });
  if (error instanceof APIError) {
    const status = error.status;
    if (status === undefined) return new LlmError('NodeFailed', 'the model stream failed', { cause: error });
    if (status === 429) {
      const retryAfterMs = retryAfterMsOf(error.headers, nowMs);
      return new LlmError('NodeFailed', 'the model provider is rate limiting (HTTP 429)', { cause: error, retryAfterMs, rateLimited: true });
    }
    if (status >= 400 && status !== 408 && isCapacityRefusal(error.message ?? '')) {
      return new LlmError('CapacityRejected', `the model provider cannot load the model for lack of capacity (HTTP ${status}): free capacity or pin another model`, { cause: error });
    }
    const failureClass = classOfStatus(status);
    const text =
      failureClass === 'ValidationFailed'
        ? `the model provider refused the request (HTTP ${status})`
        : failureClass === 'Timeout'
          ? `the model provider timed out (HTTP ${status})`
          : `the model provider failed (HTTP ${status})`;
    return new LlmError(failureClass, text, { cause: error });
  }
  return new LlmError('NodeFailed', 'the model call failed', { cause: error });
}
