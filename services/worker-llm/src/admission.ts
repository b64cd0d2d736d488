/**
 * Provider admission shared by every worker-llm replica through Redis: per
 * provider/model, at most `maxConcurrentCalls` calls in flight (a sorted-set semaphore
 * whose members are leases expiring on the Redis clock, renewed while the call runs, so
 * a killed worker frees its slot within one lease period), at most `tokensPerMinute`
 * tokens per fixed minute window, and a cool-down after a 429 (`retry-after`, else
 * DEFAULT_COOLDOWN_MS) during which nobody calls. A call waiting for capacity holds no
 * slot and spends no attempt; the wait honours the invocation's signal.
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '@flowline/queue';
import { abortErrorOf } from './errors';
import type { AdmissionLimits } from './providers/registry';

/** Cool-down after a 429 without `retry-after`, ms. */
export const DEFAULT_COOLDOWN_MS = 1_000;
/** Longest cool-down honoured from a `retry-after`, ms. */
export const MAX_COOLDOWN_MS = 300_000;

const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cool = redis.call('PTTL', KEYS[2])
if cool > 0 then return {0, cool} end
local tpm = tonumber(ARGV[4])
if tpm > 0 then
  local window = math.floor(now / 60000)
  if tonumber(redis.call('HGET', KEYS[3], 'w') or '-1') == window then
    if tonumber(redis.call('HGET', KEYS[3], 'n') or '0') >= tpm then return {0, (window + 1) * 60000 - now} end
  end
end
local limit = tonumber(ARGV[2])
if limit > 0 then
  local lease = tonumber(ARGV[3])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= limit then return {0, 0} end
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease * 2)
end
return {1, 0}
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`;

const SPEND = `
local t = redis.call('TIME')
local window = math.floor((tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) / 60000)
if tonumber(redis.call('HGET', KEYS[1], 'w') or '-1') ~= window then
  redis.call('HSET', KEYS[1], 'w', window, 'n', 0)
end
redis.call('HINCRBY', KEYS[1], 'n', tonumber(ARGV[1]))
redis.call('PEXPIRE', KEYS[1], 120000)
return 1
`;

const COOL = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', tonumber(ARGV[1]))
end
return 1
`;

/** A held admission; release it exactly once when the call ends. */
export interface AdmissionLease {
  /** frees the slot and charges the tokens the call used (null: nothing known) */
  release(tokensUsed: number | null): Promise<void>;
}

export interface Admission {
  /**
   * Waits until the provider/model has capacity, then holds a slot.
   * @param onWait called once when the call has to wait
   * @throws LlmError the signal's class when it fires while waiting
   */
  acquire(key: string, limits: AdmissionLimits, signal: AbortSignal, onWait?: (waitMs: number) => void): Promise<AdmissionLease>;
  /** starts (or lengthens) a cool-down for the provider/model, e.g. after a 429 */
  coolDown(key: string, retryAfterMs: number | null): Promise<void>;
}

export interface AdmissionOptions {
  redis: RedisConnection;
  prefix: string;
  /** slot lease, renewed at a third of it while the call runs @default 30000 */
  leaseMs?: number;
  /** longest pause between capacity checks, ms @default 100 */
  pollMs?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Creates the Redis-backed admission. */
export function createAdmission(opts: AdmissionOptions): Admission {
  const { redis, prefix } = opts;
  const leaseMs = opts.leaseMs ?? 30_000;
  const pollMs = opts.pollMs ?? 100;
  const keys = (key: string) => ({
    slots: `${prefix}:llm:slots:${key}`,
    cool: `${prefix}:llm:cool:${key}`,
    tpm: `${prefix}:llm:tpm:${key}`,
  });

  return {
    async acquire(key, limits, signal, onWait) {
      const k = keys(key);
      const token = randomUUID();
      let waited = false;
      for (;;) {
        if (signal.aborted) throw abortErrorOf(signal);
        const [ok, hint] = (await redis.eval(
          ACQUIRE, 3, k.slots, k.cool, k.tpm, token, limits.maxConcurrentCalls, leaseMs, limits.tokensPerMinute,
        )) as [number, number];
        if (ok === 1) break;
        if (!waited) {
          waited = true;
          onWait?.(hint);
        }
        // Jitter spreads waiters of several replicas over the poll period.
        await sleep(Math.min(Math.max(hint, 10), pollMs) + Math.floor(Math.random() * pollMs * 0.5), signal);
      }
      const held = limits.maxConcurrentCalls > 0;
      const renew = held
        ? setInterval(() => void redis.eval(RENEW, 1, k.slots, token, leaseMs).catch(() => undefined), Math.max(10, Math.floor(leaseMs / 3)))
        : null;
      let released = false;
      return {
        async release(tokensUsed) {
          if (released) return;
          released = true;
          if (renew) clearInterval(renew);
          const pipeline = redis.pipeline();
          if (held) pipeline.zrem(k.slots, token);
          if (limits.tokensPerMinute > 0 && tokensUsed !== null && tokensUsed > 0) pipeline.eval(SPEND, 1, k.tpm, tokensUsed);
          await pipeline.exec();
        },
      };
    },
    async coolDown(key, retryAfterMs) {
      const ms = Math.min(Math.max(1, Math.ceil(retryAfterMs ?? DEFAULT_COOLDOWN_MS)), MAX_COOLDOWN_MS);
      await redis.eval(COOL, 1, keys(key).cool, ms);
    },
  };
}
