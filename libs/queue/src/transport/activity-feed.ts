/**
 * Live activity of one invocation (CONTRACT §6 `nodeActivity`): token deltas
 * (content, reasoning), tool calls, phases (an MCP tool's progress notifications among them,
 * on either lane) and the terminal entry, appended with XADD
 * to `<prefix>:activity:<invocationId>` (MAXLEN-bounded, short TTL) for the live
 * channel to serve. Consecutive content/reasoning deltas are coalesced and written in
 * batches every `flushMs`. Each entry's `offset` is its 0-based position in the
 * invocation's feed, so a reader resumes after the last offset it saw. The feed is
 * best effort: a Redis error loses activity, never the node's outcome.
 */
import type { ActivityType } from '../protocol/live';
import { activityStreamKey } from '../protocol/live';
import type { RedisConnection } from './connect-redis';

/** One entry as stored in the stream (all fields strings in Redis). */
export interface ActivityEntry {
  runId: string;
  nodeKey: string;
  invocationId: string;
  type: ActivityType;
  offset: number;
  text?: string;
}

export interface ActivityOptions {
  redis: RedisConnection;
  prefix: string;
  /** approximate cap of entries per stream @default 2000 */
  maxLen?: number;
  /** stream TTL, seconds, refreshed on each write @default 600 */
  ttlSeconds?: number;
  /** batching interval, ms @default 50 */
  flushMs?: number;
  onError?: (err: unknown) => void;
}

export interface ActivityFeed {
  push(type: ActivityType, text?: string): void;
  /** writes the terminal entry and everything pending */
  end(text: string): Promise<void>;
}

/** A feed for one invocation. */
export function createActivityFeed(opts: ActivityOptions, ids: { runId: string; nodeKey: string; invocationId: string }): ActivityFeed {
  const key = activityStreamKey(ids.invocationId, opts.prefix);
  const maxLen = opts.maxLen ?? 2_000;
  const ttl = opts.ttlSeconds ?? 600;
  const flushMs = opts.flushMs ?? 50;
  let pending: { type: ActivityType; text?: string }[] = [];
  let offset = 0;
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();
  let ended = false;

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return writing;
    const pipeline = opts.redis.pipeline();
    for (const e of batch) {
      const fields = ['runId', ids.runId, 'nodeKey', ids.nodeKey, 'invocationId', ids.invocationId, 'type', e.type, 'offset', String(offset++)];
      if (e.text !== undefined) fields.push('text', e.text);
      pipeline.xadd(key, 'MAXLEN', '~', maxLen, '*', ...fields);
    }
    pipeline.expire(key, ttl);
    // Writes stay in order: each batch waits for the one before.
    writing = writing.then(() => pipeline.exec().then(() => undefined, (err: unknown) => opts.onError?.(err)));
    return writing;
  }

  return {
    push(type, text) {
      if (ended) return;
      const last = pending[pending.length - 1];
      if (last && last.type === type && (type === 'content' || type === 'reasoning')) last.text = (last.text ?? '') + (text ?? '');
      else pending.push(text === undefined ? { type } : { type, text });
      timer ??= setTimeout(() => void flush(), flushMs);
    },
    async end(text) {
      if (ended) return writing;
      pending.push({ type: 'terminal', text });
      ended = true;
      await flush();
    },
  };
}

/** Reads an invocation's activity (tests, the live channel). */
export async function readActivity(redis: RedisConnection, prefix: string, invocationId: string): Promise<ActivityEntry[]> {
  const rows = await redis.xrange(activityStreamKey(invocationId, prefix), '-', '+');
  return rows.map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i] as string] = flat[i + 1] as string;
    const entry: ActivityEntry = {
      runId: f.runId ?? '',
      nodeKey: f.nodeKey ?? '',
      invocationId: f.invocationId ?? '',
      type: (f.type ?? 'phase') as ActivityType,
      offset: Number(f.offset ?? 0),
    };
    if (f.text !== undefined) entry.text = f.text;
    return entry;
  });
}
