/**
 * The default model when `LLM_BASE_URL` is set and `LLM_MODEL` is not: the provider's
 * `GET /models` names it. One model → that model. Several → ambiguous: the worker stops
 * (at boot with an invalid-configuration message naming `LLM_MODEL`; later through a
 * graceful shutdown), so no run fails for a configuration only an operator can fix. No
 * answer yet (the provider may start after the worker) or no model listed → waiting: the
 * worker keeps asking in the background with bounded backoff, and a call that needs the
 * model meanwhile asks once more and then fails retryably (NodeFailed), never as a
 * validation error.
 */
import type { Logger } from 'pino';

/** Where discovery stands. */
export type ModelDiscoveryState =
  | { kind: 'resolved'; model: string }
  | { kind: 'ambiguous'; models: string[] }
  /** `unavailable`: the provider did not answer (or answered an error); `empty`: it listed no model */
  | { kind: 'waiting'; why: 'unavailable' | 'empty' };

export interface ModelDiscoveryOptions {
  /** the provider's model ids; throws when it does not answer */
  list(): Promise<string[]>;
  /** first background retry delay, ms (doubles per failure) */
  retryMinMs: number;
  /** longest background retry delay, ms */
  retryMaxMs: number;
  logger: Logger;
  /** the provider listed several models after {@link ModelDiscovery.start} (at boot the caller reads the state) */
  onAmbiguous?(models: string[]): void;
}

export interface ModelDiscovery {
  state(): ModelDiscoveryState;
  /** asks the provider now; concurrent callers share one request. A settled state (resolved, ambiguous) is kept. */
  refresh(): Promise<ModelDiscoveryState>;
  /** keeps asking in the background, with backoff, until the state settles or {@link stop} */
  start(): void;
  stop(): void;
}

/** How many ids an ambiguity message lists. */
export const LISTED_MODEL_IDS = 5;

/** The sentence that tells an operator to set LLM_MODEL (boot message, log line, failure reason). */
export function ambiguityMessage(models: readonly string[]): string {
  const shown = models.slice(0, LISTED_MODEL_IDS).join(', ');
  const more = models.length > LISTED_MODEL_IDS ? `, … ${models.length - LISTED_MODEL_IDS} more` : '';
  return `LLM_MODEL: unset, and the provider at LLM_BASE_URL serves ${models.length} models (${shown}${more}): set LLM_MODEL to one of them`;
}

/** Creates a discovery; nothing is asked before {@link ModelDiscovery.refresh} or {@link ModelDiscovery.start}. */
export function createModelDiscovery(opts: ModelDiscoveryOptions): ModelDiscovery {
  const log = opts.logger;
  let current: ModelDiscoveryState = { kind: 'waiting', why: 'unavailable' };
  let asked = false;
  let inFlight: Promise<ModelDiscoveryState> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let delayMs = opts.retryMinMs;
  let running = false;

  const settled = () => current.kind !== 'waiting';

  function enter(next: ModelDiscoveryState, err?: unknown): void {
    const changed = !asked || next.kind !== current.kind || (next.kind === 'waiting' && current.kind === 'waiting' && next.why !== current.why);
    asked = true;
    current = next;
    if (!changed) return;
    if (next.kind === 'resolved') log.info({ model: next.model }, 'LLM_MODEL is unset: using the only model the provider serves');
    else if (next.kind === 'ambiguous') {
      log.error({ models: next.models.slice(0, LISTED_MODEL_IDS), count: next.models.length }, ambiguityMessage(next.models));
      if (running) opts.onAmbiguous?.(next.models);
    }
    else if (next.why === 'empty') log.warn('LLM_MODEL is unset and the provider lists no model yet: LLM nodes without a model pin fail retryably until it serves one');
    else log.warn({ err }, 'LLM_MODEL is unset and the provider does not answer GET /models yet: LLM nodes without a model pin fail retryably until it does');
  }

  async function ask(): Promise<ModelDiscoveryState> {
    try {
      const ids = [...new Set(await opts.list())];
      if (ids.length === 1) enter({ kind: 'resolved', model: ids[0]! });
      else if (ids.length > 1) enter({ kind: 'ambiguous', models: ids });
      else enter({ kind: 'waiting', why: 'empty' });
    } catch (err) {
      enter({ kind: 'waiting', why: 'unavailable' }, err);
    }
    return current;
  }

  function refresh(): Promise<ModelDiscoveryState> {
    if (settled()) return Promise.resolve(current);
    inFlight ??= ask().finally(() => (inFlight = null));
    return inFlight;
  }

  function schedule(): void {
    if (!running || settled()) return;
    timer = setTimeout(() => {
      timer = null;
      void refresh().then(() => {
        delayMs = Math.min(delayMs * 2, opts.retryMaxMs);
        schedule();
      });
    }, delayMs);
  }

  return {
    state: () => current,
    refresh,
    start() {
      if (running) return;
      running = true;
      delayMs = opts.retryMinMs;
      schedule();
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
