/**
 * Errors a tool leaks outside the promise it returned — an `'error'` event nobody listens
 * to (a pooled database client dropped by a server restart), a rejection nobody handles.
 * Node would crash the whole worker with every call in flight. Instead:
 *
 * - each tool call runs in a fault scope (AsyncLocalStorage). Node runs the process's
 *   `uncaughtException` / `unhandledRejection` handlers in the async context the error
 *   surfaced in, so a leak is attributed to the call that started the failing work (a
 *   resource created by an earlier call is attributed to that earlier call). A call still
 *   running fails at once with {@link ToolModuleFault} (NodeFailed: the engine retries it on
 *   a fresh attempt), whatever its own promise does.
 * - the process policy ({@link installLeakedErrorPolicy}) logs the leak at error and asks
 *   the process to drain and exit non-zero: after an uncaught error the module's own state
 *   (pools, sockets, caches) cannot be trusted (Node's own guidance), so a fresh process is
 *   the only safe one; draining lets every other call in flight finish within
 *   SHUTDOWN_GRACE_MS instead of dying with it, and the non-zero exit tells the supervisor
 *   (and the chaos suite) that something broke.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ToolError } from './tool-error';

/** A tool call failed because its tool leaked an asynchronous error (retryable: NodeFailed). */
export class ToolModuleFault extends ToolError {
  constructor(tool: string, leaked: unknown) {
    const kind = leaked instanceof Error ? leaked.name : typeof leaked;
    super('NodeFailed', `tool ${tool} leaked an asynchronous error (${kind}) outside its call: ToolModuleFault`, {
      cause: leaked,
      code: 'ToolModuleFault',
    });
    this.name = 'ToolModuleFault';
  }
}

interface FaultScope {
  tool: string;
  invocationId: string;
  settled: boolean;
  fail(leaked: unknown): void;
}

const scopes = new AsyncLocalStorage<FaultScope>();

/**
 * Runs one tool call in a fault scope: a leak attributed to it (see
 * {@link attributeLeakedError}) rejects the returned promise with {@link ToolModuleFault}.
 */
export async function runInFaultScope<T>(tool: string, invocationId: string, call: () => Promise<T> | T): Promise<T> {
  let reject!: (error: ToolModuleFault) => void;
  const faulted = new Promise<never>((_, r) => (reject = r));
  const scope: FaultScope = { tool, invocationId, settled: false, fail: (leaked) => reject(new ToolModuleFault(tool, leaked)) };
  try {
    return await Promise.race([scopes.run(scope, async () => call()), faulted]);
  } finally {
    scope.settled = true;
  }
}

/** The call an error surfaced under, as far as it can be told. */
export interface LeakAttribution {
  tool: string;
  invocationId: string;
  /** true when that call was still running and now fails with ToolModuleFault */
  failedCall: boolean;
}

/**
 * Attributes an error caught by a process-level handler to the tool call whose async
 * context it surfaced in, failing that call if it still runs; null outside any call.
 */
export function attributeLeakedError(leaked: unknown): LeakAttribution | null {
  const scope = scopes.getStore();
  if (scope === undefined) return null;
  const failedCall = !scope.settled;
  if (failedCall) {
    scope.settled = true;
    scope.fail(leaked);
  }
  return { tool: scope.tool, invocationId: scope.invocationId, failedCall };
}

export interface LeakedErrorPolicyOptions {
  logger: { error(obj: object, msg: string): void };
  /** drain the work in flight, then exit non-zero; called once, on the first leak */
  drainAndExit(reason: string): void;
}

/**
 * Installs the process's `uncaughtException` and `unhandledRejection` handlers (see the
 * module comment). Returns a function that removes them.
 */
export function installLeakedErrorPolicy(opts: LeakedErrorPolicyOptions): () => void {
  let draining = false;
  const handle = (leaked: unknown, origin: string) => {
    const who = attributeLeakedError(leaked);
    opts.logger.error(
      { err: leaked, origin, tool: who?.tool ?? null, invocationId: who?.invocationId ?? null, failedCall: who?.failedCall ?? false },
      who
        ? `tool ${who.tool} leaked an asynchronous error: ${who.failedCall ? 'its call fails ToolModuleFault; ' : ''}draining, then exiting 1`
        : 'an asynchronous error escaped every handler: draining, then exiting 1',
    );
    if (draining) return;
    draining = true;
    opts.drainAndExit(who ? `tool ${who.tool} leaked an asynchronous error` : 'an asynchronous error escaped every handler');
  };
  const onException = (err: Error, origin: string) => handle(err, origin);
  const onRejection = (reason: unknown) => handle(reason, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
