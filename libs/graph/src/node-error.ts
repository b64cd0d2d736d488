/**
 * The one error base class of node work: a lane's typed failures (the tool lane's
 * `ToolError`, the LLM lane's `LlmError`) extend it, so the lane-worker skeleton (libs/queue
 * `createLaneWorker`) turns any of them into an outcome by its `failureClass` alone, and
 * anything else into NodeFailed. Its message is stored as the node's `reason`: it never
 * quotes a document, an argument value or a prompt.
 */
import { RETRYABLE_FAILURE_CLASSES, type FailureClass, type JsonObject } from './model';

/** The classes a node's own work can fail with (CONTRACT §4); the rest are the engine's. */
export type NodeFailureClass = Extract<FailureClass, 'NodeFailed' | 'ValidationFailed' | 'Timeout' | 'Cancelled' | 'Interrupted' | 'CapacityRejected'>;

/** A failure of a node's work with the failure class to report and a stable `code`. */
export class FlowlineNodeError extends Error {
  readonly failureClass: NodeFailureClass;
  /** stable per class and lane (e.g. `ToolTimedOut`); the class name itself when none is given */
  readonly code: string;
  /**
   * Model usage the failed attempt spent before it failed (`{ inputTokens, outputTokens, model, … }`,
   * set by the LLM lane), reported with the failure so run budgets count it; null when none.
   */
  usage: JsonObject | null = null;

  constructor(failureClass: NodeFailureClass, message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlowlineNodeError';
    this.failureClass = failureClass;
    this.code = options?.code ?? failureClass;
  }

  /** true when the engine may retry the node (NodeFailed, Timeout, Interrupted) */
  get retryable(): boolean {
    return RETRYABLE_FAILURE_CLASSES.has(this.failureClass);
  }
}

/** The failure class `error` reports: its own when it is a {@link FlowlineNodeError}, else NodeFailed. */
export function failureClassOf(error: unknown): NodeFailureClass {
  return error instanceof FlowlineNodeError ? error.failureClass : 'NodeFailed';
}

/**
 * The error an aborted invocation stands for in a lane whose failures are `own`: the signal's
 * reason when it is one (the worker aborts with Timeout, Cancelled or Interrupted errors), else
 * the lane's Cancelled error, which `cancelled` makes.
 */
export function abortReasonOf<E extends FlowlineNodeError>(signal: AbortSignal, own: abstract new (...args: never[]) => E, cancelled: () => E): E {
  const reason: unknown = signal.reason;
  return reason instanceof own ? reason : cancelled();
}
