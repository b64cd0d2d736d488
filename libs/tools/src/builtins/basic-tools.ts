/** Built-in tools without IO: echo, wait, json_extract (CONTRACT §2.3). */
import type { Json, JsonObject } from '@flowline/graph';
import { resolveDotPath } from '../dot-path';
import { abortError, throwIfAborted, toolFailed } from '../tool-error';
import type { ToolDefinition } from '../tool-definition';

/** Longest `wait` accepted: one hour (the node's deadline usually ends it sooner). */
export const MAX_WAIT_MS = 3_600_000;

export const echoTool: ToolDefinition = {
  name: 'echo',
  description: 'Returns its arguments unchanged.',
  argumentsSchema: { type: 'object', additionalProperties: true },
  requiresAllowedUrls: false,
  run: (args) => args,
};

/** Resolves after `ms`, or rejects with the abort error as soon as the signal fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export const waitTool: ToolDefinition = {
  name: 'wait',
  description: 'Waits `ms` milliseconds, then returns { waitedMs }. Cancellation and the node deadline end it early.',
  argumentsSchema: {
    type: 'object',
    properties: { ms: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS } },
    required: ['ms'],
    additionalProperties: false,
  },
  requiresAllowedUrls: false,
  run: async (args, ctx) => {
    const ms = args.ms as number;
    await sleep(ms, ctx.signal);
    return { waitedMs: ms };
  },
};

export const jsonExtractTool: ToolDefinition = {
  name: 'json_extract',
  description: 'Returns the member of `value` at the dot path `path` (a.b.c), or null when it is missing.',
  argumentsSchema: {
    type: 'object',
    properties: { value: {}, path: { type: 'string', pattern: '^[^.]+(\\.[^.]+)*$' } },
    required: ['value', 'path'],
    additionalProperties: false,
  },
  requiresAllowedUrls: false,
  run: (args) => {
    const lookup = resolveDotPath(args.value, args.path as string);
    return lookup.found ? lookup.value : null;
  },
};

/** Calls per key seen by the `counter` test tool in this process. */
const counters = new Map<string, number>();

/** Test-only tools, registered with `testTools` (WF_TEST_TOOLS=1). */
export const testFailTool: ToolDefinition = {
  name: 'test_fail',
  description:
    'Test tool: waits `ms` (default 0), then fails (retryable) on attempts below `untilAttempt`, or returns its arguments.',
  argumentsSchema: {
    type: 'object',
    properties: { untilAttempt: { type: 'integer', minimum: 1 }, ms: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS } },
    required: ['untilAttempt'],
    additionalProperties: true,
  },
  requiresAllowedUrls: false,
  run: async (args: JsonObject, ctx) => {
    // The wait keeps an attempt in flight long enough for a test to break something under it.
    if (typeof args.ms === 'number') await sleep(args.ms, ctx.signal);
    const untilAttempt = args.untilAttempt as number;
    if (ctx.attempt < untilAttempt) {
      throw toolFailed(`test_fail: attempt ${ctx.attempt} is below untilAttempt ${untilAttempt}`);
    }
    return args;
  },
};

export const counterTool: ToolDefinition = {
  name: 'counter',
  description: 'Test tool: counts its calls per `key` in this worker process and returns { key, count, invocationId }.',
  argumentsSchema: {
    type: 'object',
    properties: { key: { type: 'string', minLength: 1, maxLength: 200 } },
    required: ['key'],
    additionalProperties: false,
  },
  requiresAllowedUrls: false,
  run: (args, ctx): Json => {
    const key = args.key as string;
    const count = (counters.get(key) ?? 0) + 1;
    counters.set(key, count);
    return { key, count, invocationId: ctx.invocationId };
  },
};
