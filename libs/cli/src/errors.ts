/**
 * The CLI's own error classes and the one place any error becomes a `code: message`
 * line on stderr plus an exit code. API refusals never print a stack.
 */
import { ApiRequestError, LiveRequestError } from '@flowline/client';
import type { Issue } from '@flowline/graph';
import { EXIT, type CliIo, type ExitCode } from './io';
import { issueLine } from './format';

/** A mistake in the command line or in a local file it names (exit 2). */
export class UsageError extends Error {
  readonly code = 'UsageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}

/** The API could not be reached at all (no HTTP answer). */
export class ConnectionError extends Error {
  readonly code = 'ConnectionFailed';
  constructor(baseUrl: string, cause: unknown) {
    // fetch rejects with a TypeError whose cause says why (ECONNREFUSED, ENOTFOUND, "bad port", …)
    const inner = (cause as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const why = inner?.code ?? inner?.message ?? (cause instanceof Error ? cause.message : String(cause));
    super(`cannot reach ${baseUrl} (${String(why)})`, { cause });
    this.name = 'ConnectionError';
  }
}

/** A followed run did not reach a terminal status within `--timeout`. */
export class FollowTimeoutError extends Error {
  readonly code = 'Timeout';
  constructor(runId: string, seconds: number) {
    super(`run ${runId} did not finish within ${seconds} s`);
    this.name = 'FollowTimeoutError';
  }
}

/** A local graph file that fails the parser: every keyed error (exit 1, as the API's GraphInvalid). */
export class LocalGraphInvalidError extends Error {
  readonly code = 'GraphInvalid';
  constructor(
    file: string,
    readonly details: Issue[],
    readonly warnings: Issue[],
  ) {
    super(`${file} is not a valid graph: ${details.length} error${details.length === 1 ? '' : 's'}`);
    this.name = 'LocalGraphInvalidError';
  }
}

/** Prints `err` as `code: message` (plus keyed details) and returns the exit code. */
export function reportError(err: unknown, io: CliIo): ExitCode {
  if (err instanceof ApiRequestError) {
    io.stderr(`${err.code}: ${err.message}\n`);
    if (Array.isArray(err.details)) for (const d of err.details) io.stderr(`  ${issueLine(d)}\n`);
    return EXIT.refused;
  }
  if (err instanceof LocalGraphInvalidError) {
    io.stderr(`${err.code}: ${err.message}\n`);
    for (const d of err.details) io.stderr(`  ${issueLine(d)}\n`);
    for (const w of err.warnings) io.stderr(`  warning ${issueLine(w)}\n`);
    return EXIT.refused;
  }
  if (err instanceof UsageError) {
    io.stderr(`${err.code}: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof LiveRequestError || err instanceof ConnectionError || err instanceof FollowTimeoutError) {
    io.stderr(`${err.code}: ${err.message}\n`);
    return EXIT.refused;
  }
  // Not a refusal: a defect or an environment failure; the message without the stack still.
  io.stderr(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.refused;
}
