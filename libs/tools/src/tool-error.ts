/**
 * Typed tool failures. Each carries the failure class the worker reports (CONTRACT §4):
 * NodeFailed is retryable within the node's attempt budget; ValidationFailed is not
 * (the same arguments fail the same way); Timeout and Cancelled come from the
 * invocation's AbortSignal. Messages are safe to store as a node's `reason`: they
 * never quote argument values.
 */
import { abortReasonOf, FlowlineNodeError, type NodeFailureClass } from '@flowline/graph';

export type ToolFailureClass = NodeFailureClass;

export const TOOL_ERROR_CODES = {
  NodeFailed: 'ToolFailed',
  ValidationFailed: 'ToolArgumentsInvalid',
  Timeout: 'ToolTimedOut',
  Cancelled: 'ToolCancelled',
  Interrupted: 'ToolInterrupted',
  CapacityRejected: 'ToolCapacityRejected',
} as const satisfies Record<ToolFailureClass, string>;

/**
 * The codes of MCP tool failures: the server could not be reached (NodeFailed, retried), the
 * tool answered an error (NodeFailed), the server or tool is not there for the tenant
 * (ValidationFailed: the same call fails the same way).
 */
export const MCP_ERROR_CODES = ['McpServerUnreachable', 'McpToolFailed', 'McpServerUnknown', 'McpToolNotListed'] as const;

/** Every code a ToolError carries: one per failure class, plus the codes of its subclasses and of MCP failures. */
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[ToolFailureClass] | 'ToolModuleFault' | (typeof MCP_ERROR_CODES)[number];

/** A tool failure with a stable `code` and the failure class to report. */
export class ToolError extends FlowlineNodeError {
  declare readonly code: ToolErrorCode;

  constructor(failureClass: ToolFailureClass, message: string, options?: { cause?: unknown; code?: ToolErrorCode }) {
    super(failureClass, message, { cause: options?.cause, code: options?.code ?? TOOL_ERROR_CODES[failureClass] });
    this.name = 'ToolError';
  }
}

/** A retryable failure (NodeFailed). */
export function toolFailed(message: string, cause?: unknown): ToolError {
  return new ToolError('NodeFailed', message, { cause });
}

/** A non-retryable failure caused by the arguments or the node's config (ValidationFailed). */
export function toolInvalid(message: string, cause?: unknown): ToolError {
  return new ToolError('ValidationFailed', message, { cause });
}

/** The error an aborted signal stands for (see {@link abortReasonOf}). */
export function abortError(signal: AbortSignal): ToolError {
  return abortReasonOf(signal, ToolError, () => new ToolError('Cancelled', 'the invocation was cancelled'));
}

/** Throws the abort error when the signal has fired. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}
