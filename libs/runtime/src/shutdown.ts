import type { Logger } from './logger';

/** Frees one resource at shutdown (close a pool, stop a loop, drain a worker). */
export type Releaser = () => Promise<void> | void;

/** Options of {@link createShutdown}. */
export interface ShutdownOptions {
  /** releasers still running after this long are abandoned and the exit code is 1 @default 10000 */
  graceMs?: number;
  logger?: Logger;
  /** @default process.exit */
  exit?: (code: number) => void;
}

/** An ordered set of releasers run once on SIGTERM/SIGINT or `shutdown()`. */
export interface Shutdown {
  /** registers a releaser; releasers run in reverse registration order (last opened, first closed) */
  onShutdown(releaser: Releaser, name?: string): void;
  /**
   * Runs every releaser within the grace period, then exits: 0, or 1 on a releaser error or
   * timeout, or `exitCode` when given (a shutdown the process asked for itself because it
   * cannot go on, e.g. a fault it drained after; the supervisor sees a failure).
   */
  shutdown(reason: string, exitCode?: number): Promise<void>;
  /** binds SIGTERM and SIGINT; a second signal exits at once with 1 */
  installSignalHandlers(): void;
}

/** Creates an independent shutdown registry (services use the process-wide one below). */
export function createShutdown(opts: ShutdownOptions = {}): Shutdown {
  const releasers: Array<{ name: string; fn: Releaser }> = [];
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const graceMs = opts.graceMs ?? 10_000;
  let running: Promise<void> | null = null;

  const runAll = async (reason: string, exitCode: number) => {
    opts.logger?.info({ reason, exitCode }, 'shutting down');
    let failed = false;
    const work = (async () => {
      for (const r of [...releasers].reverse()) {
        try {
          await r.fn();
        } catch (err) {
          failed = true;
          opts.logger?.error({ err, releaser: r.name }, 'releaser failed');
        }
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      work.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) opts.logger?.error({ graceMs }, 'shutdown grace period exceeded');
    exit(exitCode !== 0 ? exitCode : timedOut || failed ? 1 : 0);
  };

  return {
    onShutdown(fn, name = `releaser-${releasers.length + 1}`) {
      releasers.push({ name, fn });
    },
    shutdown(reason, exitCode = 0) {
      running ??= runAll(reason, exitCode);
      return running;
    },
    installSignalHandlers() {
      for (const sig of ['SIGTERM', 'SIGINT'] as const) {
        process.on(sig, () => {
          if (running) {
            opts.logger?.warn({ signal: sig }, 'second signal: exiting now');
            exit(1);
            return;
          }
          void this.shutdown(sig);
        });
      }
    },
  };
}

let processWide: Shutdown | null = null;

/**
 * The process-wide registry: the first call (from main.ts) may pass options and binds
 * SIGTERM/SIGINT; later calls return the same registry.
 */
export function installShutdown(opts?: ShutdownOptions): Shutdown {
  if (!processWide) {
    processWide = createShutdown(opts);
    processWide.installSignalHandlers();
  }
  return processWide;
}

/** Registers a releaser with the process-wide registry (binding the signals on first use). */
export function onShutdown(releaser: Releaser, name?: string): void {
  installShutdown().onShutdown(releaser, name);
}
