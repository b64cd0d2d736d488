/**
 * The replica's view of managed API keys: a presented secret → its key, through an in-process
 * cache so the hot path (a cache hit) costs one HMAC and no database round trip.
 *
 * Revocation reaches every replica at once: the replica that revokes (or rotates) a key drops
 * its own copy and publishes the key's id on `apiKeyChangesChannel`; every replica drops
 * its copies when the message arrives. The cache is trusted only while that subscription is
 * up — while it is down (or was lost and not yet re-established) every request reads
 * Postgres, and a reconnect empties the cache, since messages may have been missed. A copy
 * is also never kept past API_KEY_CACHE_TTL_MS, the safety net against a message Redis
 * accepted and then lost. A lookup that raced a revocation (read before the revoking commit,
 * answered after its message) answers its request but is not cached: an epoch counter bumped
 * by every message tells.
 */
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { resolveApiKeySecret, touchApiKey, type ResolvedApiKey } from '@flowline/db';
import { apiKeyChangesChannel, channelPrefix, duplicateConnection, type RedisConnection } from '@flowline/queue';
import { keyedHash } from './key-secret';

/** Tuning of {@link createManagedKeys}. */
export interface ManagedKeyOptions {
  /** API_KEY_PEPPER (or its derivation); null = managed keys disabled */
  pepper: Buffer | null;
  /** API_KEY_CACHE_TTL_MS @default 60000 */
  cacheTtlMs: number;
  /** API_KEY_CACHE_MAX @default 10000 */
  cacheMax: number;
  /** API_KEY_LAST_USED_INTERVAL_S @default 60 */
  lastUsedIntervalS: number;
  /** API_KEY_MAX_ROTATION_GRACE_S: the longest grace a rotation may give the old secret @default 604800 */
  maxRotationGraceS: number;
  /** TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For names the client @default none */
  trustedProxies?: readonly string[];
}

/** The option defaults (libs/runtime `apiKeyOptions`), pepper aside. */
export const DEFAULT_MANAGED_KEY_TUNING = { cacheTtlMs: 60_000, cacheMax: 10_000, lastUsedIntervalS: 60, maxRotationGraceS: 604_800 } as const;

/** A managed key as resolved: the key's record and when this secret stops working. */
export interface ManagedKey {
  key: ResolvedApiKey;
  /** the earlier of the key's expiry and this secret's rotation grace; null = never */
  validUntil: Date | null;
}

/** A replica's managed-key resolver. */
export interface ManagedKeys {
  /** false without a pepper: no managed key can be created or resolved */
  readonly enabled: boolean;
  /** the stored hash of `secret` (throws when disabled) */
  hash(secret: string): string;
  /** the live key whose secret hashes to `hash`, or null (unknown, revoked, past its grace or expiry) */
  resolveHash(hash: string, now?: Date): Promise<ManagedKey | null>;
  /** records a use of `keyId` from `address`, at most once per API_KEY_LAST_USED_INTERVAL_S (never awaited by a request) */
  noteUse(keyId: string, address: string | null): void;
  /** drops `keyId` here and on every other replica (after a revocation or rotation committed) */
  invalidate(keyId: string): Promise<void>;
  /** calls `fn` with each key id invalidated (here or by another replica); returns the remove function */
  onInvalidate(fn: (keyId: string) => void): () => void;
  /** resolves once the invalidation channel is subscribed */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** What {@link createManagedKeys} reads from. */
export interface ManagedKeyDeps {
  pool: Pool;
  redis: RedisConnection;
  queuePrefix: string;
  logger: Logger;
}

interface Entry {
  found: ManagedKey;
  cachedAt: number;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A resolver with its own cache and its own subscriber connection (a duplicate of `redis`). */
export function createManagedKeys(d: ManagedKeyDeps, o: ManagedKeyOptions): ManagedKeys {
  const log = d.logger.child({ component: 'api-keys' });
  const channel = apiKeyChangesChannel(channelPrefix(d.queuePrefix, d.redis));
  const byHash = new Map<string, Entry>();
  const hashesOf = new Map<string, Set<string>>();
  const inFlight = new Map<string, Promise<ManagedKey | null>>();
  const listeners = new Set<(keyId: string) => void>();
  const lastTouched = new Map<string, number>();
  let epoch = 0;
  let trusted = false;
  let subscribedOnce = false;
  let closed = false;

  const forget = (hash: string) => {
    const e = byHash.get(hash);
    if (!e) return;
    byHash.delete(hash);
    const set = hashesOf.get(e.found.key.id);
    set?.delete(hash);
    if (set?.size === 0) hashesOf.delete(e.found.key.id);
  };
  const dropKey = (keyId: string) => {
    epoch++;
    for (const h of [...(hashesOf.get(keyId) ?? [])]) forget(h);
    for (const fn of listeners) fn(keyId);
  };
  const dropAll = () => {
    epoch++;
    byHash.clear();
    hashesOf.clear();
  };

  const sub = duplicateConnection(d.redis, { maxRetriesPerRequest: null });
  sub.on('error', (err) => log.warn({ err }, 'api key invalidation redis error'));
  // from a lost connection until it is back and subscribed again, no copy is trusted
  sub.on('close', () => {
    trusted = false;
    dropAll();
  });
  sub.on('ready', () => {
    if (!subscribedOnce) return;
    // ioredis re-subscribes on reconnect (autoResubscribe) before 'ready' listeners run
    dropAll();
    trusted = true;
  });
  sub.on('message', (ch: string, message: string) => {
    if (ch !== channel) return;
    if (!UUID_RE.test(message)) {
      log.warn('malformed api key invalidation dropped');
      return;
    }
    dropKey(message);
  });
  const ready = sub.subscribe(channel).then(() => {
    subscribedOnce = true;
    trusted = true;
  });
  ready.catch((err: unknown) => log.error({ err }, 'api key invalidation subscribe failed'));

  const hash = (secret: string) => {
    if (!o.pepper) throw new Error('managed API keys are disabled (no API_KEY_PEPPER)');
    return keyedHash(o.pepper, secret);
  };

  const live = (found: ManagedKey, now: Date) => found.validUntil === null || found.validUntil.getTime() > now.getTime();

  const load = async (h: string): Promise<ManagedKey | null> => {
    const startEpoch = epoch;
    const key = await resolveApiKeySecret(d.pool, h);
    if (key === null) return null;
    const ends = [key.expiresAt, key.secretExpiresAt].filter((t): t is Date => t !== null).map((t) => t.getTime());
    const found: ManagedKey = { key, validUntil: ends.length > 0 ? new Date(Math.min(...ends)) : null };
    if (trusted && !closed && epoch === startEpoch) {
      if (byHash.size >= o.cacheMax) {
        const oldest = byHash.keys().next();
        if (!oldest.done) forget(oldest.value);
      }
      byHash.set(h, { found, cachedAt: Date.now() });
      let set = hashesOf.get(key.id);
      if (!set) hashesOf.set(key.id, (set = new Set()));
      set.add(h);
    }
    return found;
  };

  return {
    enabled: o.pepper !== null,
    hash,
    ready,
    async resolveHash(h, now = new Date()) {
      if (!o.pepper) return null;
      const hit = trusted ? byHash.get(h) : undefined;
      if (hit && Date.now() - hit.cachedAt < o.cacheTtlMs) {
        return live(hit.found, now) ? hit.found : null;
      }
      if (hit) forget(h);
      // concurrent misses of one secret share one read
      let pending = inFlight.get(h);
      if (!pending) {
        pending = load(h).finally(() => inFlight.delete(h));
        inFlight.set(h, pending);
      }
      const found = await pending;
      return found && live(found, now) ? found : null;
    },
    noteUse(keyId, address) {
      const now = Date.now();
      const last = lastTouched.get(keyId);
      if (last !== undefined && now - last < o.lastUsedIntervalS * 1000) return;
      if (lastTouched.size >= o.cacheMax) lastTouched.clear();
      lastTouched.set(keyId, now);
      touchApiKey(d.pool, keyId, address, o.lastUsedIntervalS).catch((err: unknown) => log.warn({ err, keyId }, 'api key last-use write failed'));
    },
    async invalidate(keyId) {
      dropKey(keyId);
      await d.redis.publish(channel, keyId);
    },
    onInvalidate(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      if (closed) return;
      closed = true;
      trusted = false;
      dropAll();
      listeners.clear();
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}

const shared = new WeakMap<RedisConnection, Map<string, ManagedKeys>>();

/**
 * The resolver shared by everything in this process built on `redis` and the prefix (the
 * HTTP routes, the live channel, the queue UI's sign-in), so one revocation message clears
 * one cache; created on first use (its options are the first caller's) and closed when
 * `redis` ends.
 */
export function sharedManagedKeys(d: ManagedKeyDeps, o: ManagedKeyOptions): ManagedKeys {
  let byPrefix = shared.get(d.redis);
  if (!byPrefix) {
    const map = new Map<string, ManagedKeys>();
    shared.set(d.redis, (byPrefix = map));
    d.redis.once('end', () => {
      for (const m of map.values()) void m.close();
      map.clear();
    });
  }
  let keys = byPrefix.get(d.queuePrefix);
  if (!keys) byPrefix.set(d.queuePrefix, (keys = createManagedKeys(d, o)));
  return keys;
}
