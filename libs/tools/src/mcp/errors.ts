/**
 * How a failure of an MCP call becomes the node's failure (CONTRACT §4 classes): a server
 * that cannot be reached or drops the connection → NodeFailed `McpServerUnreachable` (retried
 * within the node's budget); the tool's own error answer (`isError`) or a JSON-RPC error →
 * NodeFailed `McpToolFailed`; arguments the input schema (ours or the server's) refuses →
 * ValidationFailed; the server's own request timeout → Timeout; the invocation's aborted
 * signal → its class (Timeout, Cancelled, Interrupted). Messages name the server and tool,
 * never argument values.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, abortError } from '../tool-error';

/** The server could not be reached, refused the session, or dropped the connection. */
export function serverUnreachable(server: string, cause?: unknown): ToolError {
  return new ToolError('NodeFailed', `MCP server ${server} is unreachable${describe(cause)}`, { cause, code: 'McpServerUnreachable' });
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return '';
  const code = (cause as { code?: unknown }).code;
  // a status or errno says what went wrong without quoting anything the caller sent
  return typeof code === 'number' || typeof code === 'string' ? ` (${cause.name} ${String(code)})` : ` (${cause.name})`;
}

/** The first ToolError in an error's cause chain (the network guard's refusal travels as a cause of `fetch failed`). */
function toolErrorIn(error: unknown): ToolError | null {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ToolError) return e;
  }
  return null;
}

/**
 * Classifies an error thrown while connecting to `server` (phase `connect`) or calling one of
 * its tools (phase `call`).
 */
export function classifyMcpError(error: unknown, signal: AbortSignal | null, server: string, tool: string | null, phase: 'connect' | 'call'): ToolError {
  if (signal?.aborted) return abortError(signal);
  const refused = toolErrorIn(error);
  if (refused) return refused;
  const what = tool === null ? `MCP server ${server}` : `MCP tool ${server}/${tool}`;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams) return new ToolError('ValidationFailed', `${what} refused the arguments (invalid params)`, { cause: error });
    if (error.code === ErrorCode.RequestTimeout) return new ToolError('Timeout', `${what} did not answer within its timeoutMs`, { cause: error });
    if (error.code === ErrorCode.ConnectionClosed) return serverUnreachable(server, error);
    if (phase === 'call') return new ToolError('NodeFailed', `${what} failed (JSON-RPC error ${error.code})`, { cause: error, code: 'McpToolFailed' });
  }
  return serverUnreachable(server, error);
}
