/**
 * Typed LLM-lane failures. Each carries the failure class the worker reports
 * (CONTRACT §4). Messages are stored as the node's `reason`: they never quote a
 * prompt, a document or provider text (details go to the logs keyed by invocation id).
 */
import { abortReasonOf, FlowlineNodeError, type NodeFailureClass } from '@flowline/graph';

export type LlmFailureClass = NodeFailureClass;

export const LLM_ERROR_CODES = {
  NodeFailed: 'LlmFailed',
  ValidationFailed: 'LlmRequestInvalid',
  Timeout: 'LlmTimedOut',
  Cancelled: 'LlmCancelled',
  Interrupted: 'LlmInterrupted',
  CapacityRejected: 'LlmCapacityRejected',
} as const satisfies Record<LlmFailureClass, string>;

/** An LLM-lane failure with a stable `code` and the failure class to report. */
export class LlmError extends FlowlineNodeError {
  declare readonly code: (typeof LLM_ERROR_CODES)[LlmFailureClass];
  /** provider cool-down asked for by a 429 (`retry-after`), ms; null when none */
  readonly retryAfterMs: number | null;
  /** true when the provider answered 429: admission cools the provider/model down */
  readonly rateLimited: boolean;

  constructor(
    failureClass: LlmFailureClass,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number | null; rateLimited?: boolean },
  ) {
    super(failureClass, message, { cause: options?.cause, code: LLM_ERROR_CODES[failureClass] });
    this.name = 'LlmError';
    this.retryAfterMs = options?.retryAfterMs ?? null;
    this.rateLimited = options?.rateLimited ?? false;
  }
}

/** A retryable failure (NodeFailed). */
export const llmFailed = (message: string, cause?: unknown) => new LlmError('NodeFailed', message, { cause });

/** A non-retryable failure caused by the node's config or input (ValidationFailed). */
export const llmInvalid = (message: string, cause?: unknown) => new LlmError('ValidationFailed', message, { cause });

/** The error an aborted signal stands for (see {@link abortReasonOf}). */
export function abortErrorOf(signal: AbortSignal): LlmError {
  return abortReasonOf(signal, LlmError, () => new LlmError('Cancelled', 'the invocation was cancelled'));
}

/** Throws the abort error when the signal has fired. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortErrorOf(signal);
}
