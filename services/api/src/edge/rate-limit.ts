/**
 * Per-tenant rate limits on REST (`/v1/*`; ops routes are never limited): a token bucket for
 * writes (every method but GET/HEAD) and a looser one for reads, shared by every API replica
 * through Redis. Each bucket holds up to `burst` tokens and refills continuously at `perSecond`;
 * a read takes one token, a write one plus one per `writeBytesPerToken` bytes of the body it
 * announces (a 1 MiB create weighs more than a cancel), or the request is answered 429
 * `RateLimited` with `Retry-After` (whole seconds until its tokens are there).
 *
 * Why a Lua script and not a library: the limiter must be a token bucket (a sustained rate
 * plus a burst), atomic across replicas, on one round trip, with the exact wait for
 * Retry-After. rate-limiter-flexible's Redis limiter is a fixed window (points per duration:
 * twice the limit across a window edge, a whole window of lockout), so the bucket is the
 * script below, run with EVALSHA; its clock is Redis' `TIME`, one clock for all replicas.
 *
 * Redis unreachable (connection lost, an error, or no answer within `timeoutMs`): the limiter
 * fails open — the request is served — and a warning is logged (at most once per 10 s).
 */
import type { RedisConnection } from '@flowline/queue';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { RetryLaterError } from '../errors';
import { ErrorSchema } from '../schemas';
import { announcedLength, requestKind, type RequestKind } from './request-weight';

/** One bucket: `perSecond` refill (0 = no limit) and `burst` capacity. */
export interface BucketOptions {
  perSecond: number;
  burst: number;
}

/** The REST limits of one tenant. */
export interface RateLimitOptions {
  writes: BucketOptions;
  reads: BucketOptions;
  /** a write takes one token more per this many announced body bytes; 0 = one token per write */
  writeBytesPerToken: number;
  /** a limiter call that takes longer fails open, ms */
  timeoutMs: number;
}

/** 429: the tenant's bucket for this kind of request is empty. */
export class RateLimitedError extends RetryLaterError {
  constructor(kind: RequestKind, retryAfterSeconds: number) {
    super(429, 'RateLimited', `too many ${kind} requests for this tenant; retry after ${retryAfterSeconds} s`, retryAfterSeconds);
  }
}

/**
 * KEYS[1] the bucket (hash: tokens, at). ARGV rate per second, burst, cost (tokens, ≤ burst).
 * Refills by the time passed on Redis' clock, takes `cost` tokens when they are there. Returns
 * {1, 0} when taken, else {0, ms until they are there}. The key expires once a full bucket
 * would be back.
 */
const TAKE_TOKEN = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local taken = 0
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
  taken = 1
else
  wait = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {taken, wait}
`;

type TakeToken = (key: string, rate: number, burst: number, cost: number) => Promise<[number, number]>;

const WARN_EVERY_MS = 10_000;

/** The middleware; install on `/v1/*` after authentication (it needs the tenant). */
export function rateLimit(redis: RedisConnection, prefix: string, opts: RateLimitOptions, logger: Logger): MiddlewareHandler<AppEnv> {
  if (!(redis as unknown as { flowlineTakeToken?: TakeToken }).flowlineTakeToken) {
    redis.defineCommand('flowlineTakeToken', { numberOfKeys: 1, lua: TAKE_TOKEN });
  }
  const take = (redis as unknown as { flowlineTakeToken: TakeToken }).flowlineTakeToken.bind(redis);
  let warnedAt = -Infinity;
  const failOpen = (err: unknown) => {
    const now = Date.now();
    if (now - warnedAt < WARN_EVERY_MS) return;
    warnedAt = now;
    logger.warn({ err }, 'rate limiter unavailable (Redis); serving requests without limits');
  };
  return async (c, next) => {
    const kind = requestKind(c.req.method);
    const bucket = kind === 'read' ? opts.reads : opts.writes;
    if (bucket.perSecond <= 0) return next();
    const bytes = kind === 'write' && opts.writeBytesPerToken > 0 ? (announcedLength(c.req.raw) ?? 0) : 0;
    // never more than the bucket holds, or a large body could never pass
    const cost = Math.min(bucket.burst, 1 + Math.floor(bytes / Math.max(1, opts.writeBytesPerToken)));
    let verdict: [number, number] | null = null;
    // a lost connection fails open at once; a first connect (boot) is waited for within timeoutMs
    if (redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end') {
      failOpen(new Error(`Redis connection is ${redis.status}`));
    } else {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      });
      try {
        verdict = await Promise.race([take(`${prefix}:ratelimit:${kind}:${c.get('tenant')}`, bucket.perSecond, bucket.burst, cost), timeout]);
      } catch (err) {
        failOpen(err);
      } finally {
        clearTimeout(timer);
      }
    }
    if (verdict !== null && Number(verdict[0]) !== 1) {
      throw new RateLimitedError(kind, Math.max(1, Math.ceil(Number(verdict[1]) / 1000)));
    }
    return next();
  };
}

/** Adds the 429 answer (with its `Retry-After` header) to every keyed route of the OpenAPI document. */
export function documentRateLimits(app: OpenAPIHono<AppEnv>): void {
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type !== 'route' || !def.route.path.startsWith('/v1/')) continue;
    // a route with a 429 of its own (BacklogFull on a start) keeps it, RateLimited added
    const own = (def.route.responses as Record<string, { description?: string } | undefined>)[429]?.description;
    const limited = "RateLimited: the tenant's token bucket for writes (or reads) is empty; retry after `Retry-After` seconds";
    def.route.responses = {
      ...def.route.responses,
      429: {
        description: own === undefined ? limited : `${own.replace(/\. Also RateLimited when rate limits are on$/, '')}; or ${limited}`,
        headers: { 'Retry-After': { description: 'seconds until a token is there', schema: { type: 'integer', minimum: 1 } } },
        content: { 'application/json': { schema: ErrorSchema } },
      },
    };
  }
}
