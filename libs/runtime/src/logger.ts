import { pino, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { serializeError } from './redact';
import { activeTraceId } from './tracing';

const serializeErrorType = (err: Error) => (serializeError(err) as { type: string }).type;

export type Logger = PinoLogger;

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'password',
  'token',
  'apiKey',
  'authorization',
  'secret',
  'API_KEYS',
  'LLM_API_KEY',
  'ENCRYPTION_KEY',
  'ENCRYPTION_KEYS',
  'WAITPOINT_SIGNING_KEY',
  'API_KEY_PEPPER',
  'OIDC_CLIENT_SECRET',
  'DATABASE_URL',
  'REDIS_URL',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.authorization',
  '*.secret',
  '*.API_KEYS',
  '*.LLM_API_KEY',
  '*.ENCRYPTION_KEY',
  '*.ENCRYPTION_KEYS',
  '*.WAITPOINT_SIGNING_KEY',
  '*.API_KEY_PEPPER',
  '*.OIDC_CLIENT_SECRET',
  '*.DATABASE_URL',
  '*.REDIS_URL',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** @default 'info' */
  level?: string;
  /** a pino destination stream (tests capture lines with it) @default stdout */
  destination?: pino.DestinationStream;
}

/**
 * A structured JSON logger named after its process or module. Secrets (API keys, tokens,
 * passwords, connection strings) are censored by path; errors under `err` or `error` are
 * logged as their facts only ({@link serializeError}: no Postgres `detail`/`where`/`hint`,
 * no message that quotes input, no URL userinfo). Bind run/node/invocation ids with
 * `logger.child({ runId, nodeKey, invocationId })`; never log prompts or documents. With
 * tracing on, a line written inside a span carries its `trace_id`.
 */
export function createLogger(name: string, opts: CreateLoggerOptions = {}): Logger {
  const options: LoggerOptions = {
    name,
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError, error: serializeError },
    hooks: {
      // pino makes a bare error's message the line's `msg`: log its class there instead
      logMethod(args, method) {
        const [first, second] = args as unknown[];
        if (first instanceof Error && typeof second !== 'string') {
          return method.apply(this, [{ err: first }, `${serializeErrorType(first)} thrown`]);
        }
        return method.apply(this, args);
      },
    },
    base: { pid: process.pid },
    // tracing on: every line written inside a span carries its trace id (off: one flag check).
    // A fresh object each time: pino merges the line's fields into what the mixin returns.
    mixin() {
      const traceId = activeTraceId();
      return traceId === undefined ? {} : { trace_id: traceId };
    },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
