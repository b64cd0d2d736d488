/**
 * The replica's one subscription to the change channel (libs/queue `changesChannel`):
 * every committed change is pinged there by its committer, and this feed hands each
 * valid ping to the Socket.IO relay and to the SSE streams watching that run. Malformed
 * messages are dropped (logged), never thrown. One feed per (Redis client, prefix), so
 * the socket server and the SSE route share one subscriber connection.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { changesChannel, runChangedPingSchema, type RunChangedPing } from '@flowline/queue';

type Listener = (ping: RunChangedPing) => void;

/** A replica's change-ping source. */
export interface ChangeFeed {
  /** resolves once the channel subscription is active */
  readonly ready: Promise<void>;
  /** calls `fn` for every ping of `runId`; returns the unwatch function */
  watch(runId: string, fn: Listener): () => void;
  /** calls `fn` for every ping; returns the remove function */
  onAny(fn: Listener): () => void;
  /** calls `fn` after the subscriber reconnected (pings may have been lost meanwhile) */
  onResync(fn: () => void): () => void;
  close(): Promise<void>;
}

/** Subscribes a duplicate of `redis` to the change channel of `prefix`. */
export function createChangeFeed(redis: Redis, prefix: string, logger: Logger): ChangeFeed {
  const sub = redis.duplicate({ maxRetriesPerRequest: null });
  const channel = changesChannel(prefix);
  const byRun = new Map<string, Set<Listener>>();
  const any = new Set<Listener>();
  const resync = new Set<() => void>();
  let closed = false;
  let readyOnce = false;

  sub.on('error', (err) => logger.warn({ err }, 'change feed redis error'));
  sub.on('ready', () => {
    if (readyOnce) for (const fn of resync) fn();
    readyOnce = true;
  });
  sub.on('message', (ch: string, message: string) => {
    if (ch !== channel) return;
    let ping: RunChangedPing;
    try {
      const parsed = runChangedPingSchema.safeParse(JSON.parse(message));
      if (!parsed.success) throw parsed.error;
      ping = parsed.data;
    } catch (err) {
      logger.warn({ err }, 'malformed change ping dropped');
      return;
    }
    for (const fn of any) fn(ping);
    const set = byRun.get(ping.runId);
    if (set) for (const fn of set) fn(ping);
  });
  const ready = sub.subscribe(channel).then(() => undefined);
  ready.catch((err: unknown) => logger.error({ err }, 'change feed subscribe failed'));

  return {
    ready,
    watch(runId, fn) {
      let set = byRun.get(runId);
      if (!set) byRun.set(runId, (set = new Set()));
      set.add(fn);
      return () => {
        set.delete(fn);
        if (set.size === 0 && byRun.get(runId) === set) byRun.delete(runId);
      };
    },
    onAny(fn) {
      any.add(fn);
      return () => any.delete(fn);
    },
    onResync(fn) {
      resync.add(fn);
      return () => resync.delete(fn);
    },
    async close() {
      if (closed) return;
      closed = true;
      byRun.clear();
      any.clear();
      resync.clear();
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}

const shared = new WeakMap<Redis, Map<string, ChangeFeed>>();

/**
 * The feed shared by everything in this process built on `redis` and `prefix`; created
 * on first use and closed when `redis` ends.
 */
export function sharedChangeFeed(redis: Redis, prefix: string, logger: Logger): ChangeFeed {
  let byPrefix = shared.get(redis);
  if (!byPrefix) {
    const map = new Map<string, ChangeFeed>();
    shared.set(redis, (byPrefix = map));
    redis.once('end', () => {
      for (const f of map.values()) void f.close();
      map.clear();
    });
  }
  let feed = byPrefix.get(prefix);
  if (!feed) {
    const created = createChangeFeed(redis, prefix, logger);
    const origClose = created.close;
    const map = byPrefix;
    feed = {
      ...created,
      close: async () => {
        if (map.get(prefix) === feed) map.delete(prefix);
        await origClose();
      },
    };
    byPrefix.set(prefix, feed);
  }
  return feed;
}
