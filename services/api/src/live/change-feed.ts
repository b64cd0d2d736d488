/**
 * The replica's subscriptions to change pings (libs/queue `runChangesChannel`): every
 * committed change is pinged on its run's channel by its committer, and this feed subscribes
 * to a run's channel while something of this replica watches the run (from the first
 * `watch` to the last unwatch), handing each valid ping to the run's watchers and to the
 * `onAny` listeners. A replica nobody watches a run through spends nothing on its commits,
 * so adding replicas does not add work per commit. Malformed messages are dropped (logged), never thrown. One feed per (Redis
 * client, prefix), so the socket server and the SSE route share one subscriber connection.
 */
import type { Logger } from 'pino';
import { channelPrefix as channelPrefixOf, duplicateConnection, runChangedPingSchema, runChangesChannel, type RedisConnection, type RunChangedPing } from '@flowline/queue';

type Listener = (ping: RunChangedPing) => void;

/** Stops one watch; `ready` resolves once the run's channel subscription is active. */
export interface Unwatch {
  (): void;
  readonly ready: Promise<void>;
}

/** A replica's change-ping source. */
export interface ChangeFeed {
  /** resolves once the subscriber connection is up */
  readonly ready: Promise<void>;
  /**
   * Calls `fn` for every ping of `runId`, subscribing the run's channel on its first watch;
   * returns the unwatch function (the last one unsubscribes). Await its `ready` before
   * reading the store: a change committed after that is pinged to `fn`.
   */
  watch(runId: string, fn: Listener): Unwatch;
  /** calls `fn` for every ping of a watched run; returns the remove function */
  onAny(fn: Listener): () => void;
  /** calls `fn` after the subscriber reconnected (pings may have been lost meanwhile) */
  onResync(fn: () => void): () => void;
  /** runs whose channel this feed is subscribed to (tests, metrics) */
  watchedRuns(): number;
  /** change messages this feed's connection received since it started (tests, metrics) */
  received(): number;
  close(): Promise<void>;
}

/** A subscriber (a duplicate of `redis`) to the change channels of the watched runs of `prefix`. */
export function createChangeFeed(redis: RedisConnection, prefix: string, logger: Logger): ChangeFeed {
  const sub = duplicateConnection(redis, { maxRetriesPerRequest: null });
  // the channels of `prefix` on this connection's database (pub/sub itself ignores the database)
  const ns = channelPrefixOf(prefix, redis);
  const byRun = new Map<string, { listeners: Set<Listener>; subscribed: Promise<void> }>();
  const channelPrefix = runChangesChannel('', ns);
  const any = new Set<Listener>();
  const resync = new Set<() => void>();
  let closed = false;
  let readyOnce = false;
  let received = 0;

  sub.on('error', (err) => logger.warn({ err }, 'change feed redis error'));
  sub.on('ready', () => {
    if (readyOnce) for (const fn of resync) fn();
    readyOnce = true;
  });
  sub.on('message', (ch: string, message: string) => {
    if (!ch.startsWith(channelPrefix)) return;
    received++;
    let ping: RunChangedPing;
    try {
      const parsed = runChangedPingSchema.safeParse(JSON.parse(message));
      if (!parsed.success) throw parsed.error;
      ping = parsed.data;
    } catch (err) {
      logger.warn({ err }, 'malformed change ping dropped');
      return;
    }
    const watched = byRun.get(ping.runId);
    // a ping of a run nobody here watches any more (unsubscribe in flight) costs nothing further
    if (!watched || ch !== runChangesChannel(ping.runId, ns)) return;
    for (const fn of any) fn(ping);
    for (const fn of watched.listeners) fn(ping);
  });
  const ready = new Promise<void>((resolve, reject) => {
    if (sub.status === 'ready') resolve();
    sub.once('ready', () => resolve());
    sub.once('end', () => reject(new Error('change feed connection ended')));
  });
  ready.catch((err: unknown) => logger.error({ err }, 'change feed connection failed'));

  return {
    ready,
    watch(runId, fn) {
      let entry = byRun.get(runId);
      if (!entry) {
        const subscribed = sub.subscribe(runChangesChannel(runId, ns)).then(() => undefined);
        subscribed.catch((err: unknown) => logger.warn({ err, runId }, 'change channel subscribe failed'));
        byRun.set(runId, (entry = { listeners: new Set(), subscribed }));
      }
      const mine = entry;
      mine.listeners.add(fn);
      const unwatch = () => {
        if (!mine.listeners.delete(fn) || mine.listeners.size > 0 || byRun.get(runId) !== mine) return;
        byRun.delete(runId);
        if (!closed) {
          sub.unsubscribe(runChangesChannel(runId, ns)).catch((err: unknown) => logger.warn({ err, runId }, 'change channel unsubscribe failed'));
        }
      };
      return Object.assign(unwatch, { ready: mine.subscribed });
    },
    onAny(fn) {
      any.add(fn);
      return () => any.delete(fn);
    },
    onResync(fn) {
      resync.add(fn);
      return () => resync.delete(fn);
    },
    watchedRuns: () => byRun.size,
    received: () => received,
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

const shared = new WeakMap<RedisConnection, Map<string, ChangeFeed>>();

/**
 * The feed shared by everything in this process built on `redis` and `prefix`; created
 * on first use and closed when `redis` ends.
 */
export function sharedChangeFeed(redis: RedisConnection, prefix: string, logger: Logger): ChangeFeed {
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
