import type { Logger } from './logger';

/**
 * Every long-running loop. `runOnce` does one bounded unit of work and reports whether more
 * is waiting (true: loop again at once) or not (false: sleep until the next interval or a wake).
 */
export interface Service {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
  runOnce(): Promise<boolean>;
}

/** Options of {@link runLoop}. */
export interface RunLoopOptions {
  /** sleep after a `false` from runOnce, ms */
  idleMs: number;
  /** ± fraction of idleMs added at random (0..1) @default 0.1 */
  jitter?: number;
  /** after consecutive errors: initialMs · multiplier^(n-1), capped at maxMs */
  backoff?: { initialMs: number; maxMs: number; multiplier?: number };
  logger: Logger;
  /** name in log lines */
  name?: string;
}

/** A running loop. */
export interface LoopHandle {
  /** ends a sleep early (a wake signal arrived); no effect while runOnce is running except to skip the next sleep */
  wake(): void;
  /** lets the current runOnce finish, then stops the loop and the service */
  stop(): Promise<void>;
  /** settles when the loop has ended */
  readonly done: Promise<void>;
}

const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 10_000, multiplier: 2 };

/** A sleep that `wake()` ends at once; a wake while nothing sleeps does nothing. */
export function wakeableSleep(): { sleep(ms: number): Promise<void>; wake(): void } {
  let interrupt: (() => void) | null = null;
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          interrupt = null;
          resolve();
        }
        interrupt = done;
      }),
    wake: () => interrupt?.(),
  };
}

/**
 * Starts `service` and drives it: loop at once while runOnce returns true, sleep idleMs (with
 * jitter) when it returns false, back off exponentially and log on errors. The loop only ends
 * through `stop()`; a failure of the loop machinery itself is logged at fatal.
 */
export function runLoop(service: Service, opts: RunLoopOptions): LoopHandle {
  const name = opts.name ?? 'service';
  const log = opts.logger;
  const backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const jitter = Math.min(Math.max(opts.jitter ?? 0.1, 0), 1);
  let stopping = false;
  let woken = false;
  const nap = wakeableSleep();
  const sleep = (ms: number) => (stopping || woken ? Promise.resolve() : nap.sleep(ms));

  const loop = async () => {
    await service.start();
    let failures = 0;
    while (!stopping) {
      woken = false;
      try {
        const more = await service.runOnce();
        if (failures > 0) log.info({ loop: name, failures }, 'loop recovered');
        failures = 0;
        if (!more) await sleep(opts.idleMs * (1 + jitter * (2 * Math.random() - 1)));
      } catch (err) {
        failures++;
        const delay = Math.min(backoff.initialMs * backoff.multiplier ** (failures - 1), backoff.maxMs);
        log.error({ err, loop: name, failures, retryInMs: Math.round(delay) }, 'loop iteration failed');
        await sleep(delay);
      }
    }
    await service.stop();
  };

  const done = loop().catch((err: unknown) => {
    log.fatal({ err, loop: name }, 'loop ended by an error');
    throw err;
  });

  return {
    wake() {
      woken = true;
      nap.wake();
    },
    async stop() {
      stopping = true;
      nap.wake();
      await done;
    },
    done,
  };
}

/**
 * A loop of passes that needs no start or stop of its own (a background runner): `pass(stopping)`
 * does one round and says whether more work waits; `stopping()` turns true once `stop()` is called,
 * so a long pass can end between its batches instead of running to its end.
 */
export function runPasses(pass: (stopping: () => boolean) => Promise<boolean>, opts: RunLoopOptions): { stop(): Promise<void> } {
  let stopping = false;
  const handle = runLoop({ start() {}, stop() {}, runOnce: () => pass(() => stopping) }, opts);
  return {
    async stop() {
      stopping = true;
      await handle.stop();
    },
  };
}
