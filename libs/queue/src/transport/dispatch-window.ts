/**
 * The dispatch window's shared state in Redis: per lane, a hold of ready work
 * per tenant that has not been handed to BullMQ yet, and the round robin's memory. Every
 * dispatcher reads and writes the same keys, so releases are fair across replicas.
 *
 * Layout (all under the BullMQ prefix, a hash tag, so every key lives in one cluster slot):
 * - `<prefix>:window:<lane>:items`    hash invocationId → held job (`{ kind, data }` JSON)
 * - `<prefix>:window:<lane>:q:<tenant>` sorted set of held invocation ids, scored by
 *   `holdScore(priority, seq)` (libs/graph): the run's priority band first (5 before 1), then
 *   the hold order (first in first out within a band); a list there (the layout before run
 *   priorities) is turned into a sorted set in place, its items in the default band in order
 * - `<prefix>:window:<lane>:seq`      the lane's hold counter (the `seq` of the scores)
 * - `<prefix>:window:<lane>:tenants`  set of tenants whose list is not empty
 * - `<prefix>:window:<lane>:state`    hash `v` (version) and `s` (WindowState JSON)
 * - `<prefix>:window:<lane>:released` sorted set invocationId → release time (Redis clock, ms),
 *   until its add returned (cleared with the lane's next window call, at most
 *   {@link UNSTAMP_DELAY_MS} later), at most {@link RELEASE_GRACE_MS}: an item popped but not
 *   yet added to its lane counts as held
 *
 * An item is held once: never while held, just released, or already a job on its lane.
 * A release is a compare-and-set: it pops what the caller decided only while the state's
 * version is the one the caller read, and bumps it; a pop is atomic, so no two dispatchers
 * ever take the same item. Holding is idempotent by invocation id. What the hold loses
 * (Redis flushed, a dispatcher dying between the pop and its `addBulk`) is still Queued in
 * Postgres: the owner's in-flight check finds it neither held, nor released within the grace,
 * nor on its lane, and holds it again.
 */
import type { RedisConnection } from './connect-redis';
import type { Lane, WindowState, WorkItem } from '@flowline/graph';
import { DEFAULT_RUN_PRIORITY, EMPTY_WINDOW_STATE, HOLD_BAND, MAX_RUN_PRIORITY, runPriorityOf } from '@flowline/graph';
import { jobIdFor, queueNameFor } from '../protocol/names';
import { toWire, type Wire } from '../protocol/wire';

/** What a dispatcher reads before deciding a release. */
export interface LaneWindowFacts {
  lane: Lane;
  /** the state version a release must match */
  version: number;
  state: WindowState;
  /** jobs waiting on the BullMQ lane (not yet taken by a worker), plus those released but not yet added */
  waiting: number;
  /** held items per tenant (a withdrawn item may still be counted until it is popped) */
  tenants: { tenantId: string; backlog: number }[];
}

/** A held job as BullMQ takes it. */
export interface HeldJob {
  name: string;
  data: Wire<WorkItem>;
  /** `telemetry.metadata`: the dispatch span's context (bullmq-otel), when the work was traced */
  opts: { jobId: string; telemetry?: { metadata: string } };
}

/** Work to hold: the item, its run's tenant and, when traced, its dispatch span's context as BullMQ telemetry metadata. */
export interface HoldEntry {
  tenantId: string;
  item: WorkItem;
  trace?: string;
  /** the run's priority, 1–5 (higher is released first within the tenant); absent: 3 */
  priority?: number;
}

/**
 * How long a released item counts as held while its `addBulk` may still be on its way, ms
 * (the releasing dispatcher clears the stamp once its add returned; a stamp outlives that only
 * when the dispatcher died in between).
 */
export const RELEASE_GRACE_MS = 5_000;

/**
 * How long the release stamps of added jobs may wait to be cleared for a ride with the lane's
 * next window call (one round trip less per release), ms. Until cleared, a stamp still counts its
 * job as waiting for the other dispatchers' decisions (never this one's: its next call clears
 * them first), so their free space reads that much smaller for at most this long.
 */
export const UNSTAMP_DELAY_MS = 20;

// A tenant's hold as a sorted set: a list left by the layout before priorities becomes one in
// place (its ids in the default band, in order). ARGV-free; used by every script below.
const AS_ZSET = `
local function hold_key(k)
  if redis.call('TYPE', k).ok == 'list' then
    local ids = redis.call('LRANGE', k, 0, -1)
    redis.call('DEL', k)
    for i, id in ipairs(ids) do
      redis.call('ZADD', k, string.format('%.0f', ${MAX_RUN_PRIORITY - DEFAULT_RUN_PRIORITY} * ${HOLD_BAND} - #ids - 1 + i), id)
    end
  end
  return k
end
`;

// Pops up to `count` held ids of `tenant` (lowest score first: highest priority, then first
// held), appends each one's job to `jobs` and stamps the id in `released` at `now` (an id
// withdrawn meanwhile pops as nothing); a tenant whose hold empties leaves KEYS[1], the tenants
// set. Needs AS_ZSET; used by both releases below.
const POP = `
local function pop_into(jobs, list_prefix, tenant, count, items, released, now)
  local list = hold_key(list_prefix .. tenant)
  local popped = redis.call('ZPOPMIN', list, count)
  for j = 1, #popped, 2 do
    local job = redis.call('HGET', items, popped[j])
    if job then
      redis.call('HDEL', items, popped[j])
      redis.call('ZADD', released, now, popped[j])
      jobs[#jobs + 1] = job
    end
  end
  if redis.call('ZCARD', list) == 0 then redis.call('SREM', KEYS[1], tenant) end
end
`;

// Builds `out` = {version, stateJson, waiting, tenant1, len1, …}. KEYS: tenants, state, wait, released.
// ARGV[1]: the tenant list key prefix, ARGV[2]: grace ms. Waiting counts the jobs on the lane
// plus those released but not yet added (so two dispatchers releasing at once do not both
// see the same free space).
const FACTS_BODY = `
local t = redis.call('TIME')
local since = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[2])
local waiting = redis.call('LLEN', KEYS[3]) + redis.call('ZCOUNT', KEYS[4], since, '+inf')
local out = {tonumber(redis.call('HGET', KEYS[2], 'v') or '0'), redis.call('HGET', KEYS[2], 's') or '', waiting}
for _, t in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  out[#out + 1] = t
  out[#out + 1] = redis.call('ZCARD', hold_key(ARGV[1] .. t))
end
`;
const FACTS_TAIL = `${FACTS_BODY}
return out
`;

// After FACTS_BODY: when the lane has room for everything held (ARGV[4] is its target; 0 turns
// this off), releases all of it here, as planRelease decides in that case (libs/graph
// releasesEverything: every whole hold, credit forgotten, cursor kept), and returns
// {-1, job1, job2, …}; else falls through. KEYS: tenants, state, wait, released, items.
const RELEASE_ALL_THAT_FITS = `
local target = tonumber(ARGV[4])
if target > 0 then
  local held = 0
  for i = 5, #out, 2 do held = held + out[i] end
  if held > 0 and target - waiting >= held then
    local jobs = {-1}
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for i = 4, #out, 2 do pop_into(jobs, ARGV[1], out[i], out[i + 1], KEYS[5], KEYS[4], now) end
    released_everything(now, out[1], out[2])
    return jobs
  end
end
`;

// The state a release of everything held leaves (libs/graph releasesEverything): the version
// after `version`, credit forgotten, the cursor of `state_json` kept; stamps past the grace
// pruned. KEYS: tenants, state, wait, released. ARGV[2]: grace ms.
const RELEASED_EVERYTHING = `
local function released_everything(now, version, state_json)
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[2]))
  local cursor = cjson.null
  if state_json ~= '' then
    local ok, st = pcall(cjson.decode, state_json)
    if ok and type(st) == 'table' and type(st.cursor) == 'string' then cursor = st.cursor end
  end
  redis.call('HSET', KEYS[2], 'v', version + 1, 's', cjson.encode({deficits = {}, cursor = cursor}))
end
`;

// Before the hold: when nothing is held on the lane (no tenant in KEYS[1]) and its room under
// the target (ARGV[4] > 0) takes every new item, releases the new items straight away, as
// holding them and then releasing everything (RELEASE_ALL_THAT_FITS) would, without writing
// them into the hold only to pop them again: the lone run's hop on an idle lane. The same
// checks decide which ids are new (not held, not released within the grace, not already a
// job on the lane, once each); each is stamped released. Returns {-1, job1, …}, else falls
// through to the hold. Needs RELEASED_EVERYTHING, `hsince` and `ht`.
const PASS_THROUGH = `
local target = tonumber(ARGV[4])
if target > 0 and redis.call('SCARD', KEYS[1]) == 0 then
  local fresh, seen = {}, {}
  for i = 5, #ARGV, 4 do
    local id = ARGV[i + 1]
    local recent = redis.call('ZSCORE', KEYS[4], id)
    if not seen[id] and not (recent and tonumber(recent) >= hsince) and redis.call('EXISTS', ARGV[3] .. id) == 0
       and redis.call('HEXISTS', KEYS[5], id) == 0 then
      seen[id] = true
      fresh[#fresh + 1] = i
    end
  end
  local waiting = redis.call('LLEN', KEYS[3]) + redis.call('ZCOUNT', KEYS[4], hsince, '+inf')
  if #fresh > 0 and target - waiting >= #fresh then
    local now = hsince + tonumber(ARGV[2])
    local jobs = {-1}
    for _, i in ipairs(fresh) do
      redis.call('ZADD', KEYS[4], now, ARGV[i + 1])
      jobs[#jobs + 1] = ARGV[i + 2]
    end
    released_everything(now, tonumber(redis.call('HGET', KEYS[2], 'v') or '0'), redis.call('HGET', KEYS[2], 's') or '')
    return jobs
  end
end
`;

// Holds items, then reads the facts (and releases everything when it all fits, see above).
// KEYS: tenants, state, wait, released, items, seq. ARGV: list key prefix, grace ms, job key
// prefix, the lane's target (0: hold only), then (tenant, invocationId, job JSON, band)
// quads, band = MAX_RUN_PRIORITY − priority. An id is held once: not while it is held, released
// within the grace, or already a job on the lane. Its score: band × HOLD_BAND + the lane's next seq.
const HOLD = `
${AS_ZSET}
${POP}
${RELEASED_EVERYTHING}
local ht = redis.call('TIME')
local hsince = tonumber(ht[1]) * 1000 + math.floor(tonumber(ht[2]) / 1000) - tonumber(ARGV[2])
${PASS_THROUGH}
for i = 5, #ARGV, 4 do
  local id = ARGV[i + 1]
  local recent = redis.call('ZSCORE', KEYS[4], id)
  if not (recent and tonumber(recent) >= hsince) and redis.call('EXISTS', ARGV[3] .. id) == 0
     and redis.call('HSETNX', KEYS[5], id, ARGV[i + 2]) == 1 then
    local seq = redis.call('INCR', KEYS[6]) % ${HOLD_BAND}
    redis.call('ZADD', hold_key(ARGV[1] .. ARGV[i]), string.format('%.0f', tonumber(ARGV[i + 3]) * ${HOLD_BAND} + seq), id)
    redis.call('SADD', KEYS[1], ARGV[i])
  end
end
${FACTS_BODY}
${RELEASE_ALL_THAT_FITS}
return out`;

// The compare-and-set release. KEYS: tenants, state, items, released. ARGV: expected version,
// new state JSON, list key prefix, grace ms, then (tenant, count) pairs. Returns false when the
// version moved (a peer released first), else the popped jobs (ids withdrawn meanwhile are
// skipped); each popped id is stamped in KEYS[4] with the Redis clock (POP), stamps past the grace pruned.
const RELEASE = `
${AS_ZSET}
${POP}
if tonumber(redis.call('HGET', KEYS[2], 'v') or '0') ~= tonumber(ARGV[1]) then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 5, #ARGV, 2 do pop_into(out, ARGV[3], ARGV[i], tonumber(ARGV[i + 1]), KEYS[3], KEYS[4], now) end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[4]))
redis.call('HSET', KEYS[2], 'v', tonumber(ARGV[1]) + 1, 's', ARGV[2])
return out
`;

// Which ids are held or were released within the grace. KEYS: items, released. ARGV: grace ms, ids.
// Returns a 0/1 per id.
const HELD = `
local t = redis.call('TIME')
local since = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  local at = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 or (at and tonumber(at) >= since) then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
return out
`;

type Script = (numKeys: number, ...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** The window's scripts, each sent once and then run by its SHA (ioredis defineCommand). */
const SCRIPTS = {
  flowlineWindowHold: HOLD,
  flowlineWindowFacts: AS_ZSET + FACTS_TAIL,
  flowlineWindowRelease: RELEASE,
  flowlineWindowHeld: HELD,
} as const;

function scriptsOn(redis: RedisConnection): Record<keyof typeof SCRIPTS, Script> {
  const r = redis as unknown as Record<string, Script | undefined>;
  for (const [name, lua] of Object.entries(SCRIPTS)) if (!r[name]) redis.defineCommand(name, { lua });
  const bound = {} as Record<keyof typeof SCRIPTS, Script>;
  for (const name of Object.keys(SCRIPTS) as (keyof typeof SCRIPTS)[]) bound[name] = r[name]!.bind(redis);
  return bound;
}

/** The shared window of every lane, on one Redis connection. */
export class WindowStore {
  private readonly run: Record<keyof typeof SCRIPTS, Script>;
  /** per lane, job ids whose release stamps are still to clear (see {@link added}) */
  private readonly unstamp = new Map<Lane, string[]>();
  private unstampTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {
    this.run = scriptsOn(redis);
  }

  /**
   * Runs one window script on `lane`, preceded by clearing the stamps {@link added} left for that
   * lane: both go out on this connection in order, without waiting for each other (one write
   * inside a `corked` turn), so Redis clears before the script reads. A failed clear only leaves
   * stamps to expire with the grace.
   */
  private call(lane: Lane, script: keyof typeof SCRIPTS, args: (string | number)[]): Promise<unknown> {
    const ids = this.unstamp.get(lane);
    if (ids) {
      this.unstamp.delete(lane);
      if (this.unstamp.size === 0 && this.unstampTimer) {
        clearTimeout(this.unstampTimer);
        this.unstampTimer = null;
      }
      void this.redis.zrem(this.key(lane, 'released'), ...ids).catch(() => undefined);
    }
    return this.run[script](...(args as [number, ...(string | number)[]]));
  }

  private key(lane: Lane, part: string): string {
    return `${this.prefix}:window:${lane}:${part}`;
  }

  private factKeys(lane: Lane): [string, string, string, string] {
    return [this.key(lane, 'tenants'), this.key(lane, 'state'), `${this.prefix}:${queueNameFor(lane)}:wait`, this.key(lane, 'released')];
  }

  /** Holds `entries` (all of `lane`) and returns the lane's facts, in one round trip. */
  async hold(lane: Lane, entries: readonly HoldEntry[]): Promise<LaneWindowFacts> {
    const raw = await this.holdScript(lane, entries, entries.map(heldForm), 0);
    return factsOf(lane, raw);
  }

  /**
   * Holds `entries` (all of `lane`) and, when the lane's waiting depth leaves room under
   * `target` for everything held, releases all of it in the same round trip (the one case
   * planRelease has nothing to arbitrate, libs/graph `releasesEverything`); else returns the
   * facts for a decided release.
   */
  async holdOrRelease(lane: Lane, entries: readonly HoldEntry[], target: number): Promise<{ released: HeldJob[] } | { facts: LaneWindowFacts }> {
    const held = entries.map(heldForm);
    const raw = await this.holdScript(lane, entries, held, Math.max(0, Math.floor(target)));
    if (Number(raw[0]) !== -1) return { facts: factsOf(lane, raw) };
    // a released job this call sent is the text it built: its job needs no parse of that text
    const sent = new Map(held.map((h) => [h.text, h.job]));
    return { released: (raw.slice(1) as string[]).map((text) => sent.get(text) ?? heldJobOf(text)) };
  }

  private async holdScript(lane: Lane, entries: readonly HoldEntry[], held: readonly { text: string }[], target: number): Promise<unknown[]> {
    const args: (string | number)[] = [this.key(lane, 'q:'), RELEASE_GRACE_MS, `${this.prefix}:${queueNameFor(lane)}:`, target];
    entries.forEach((e, i) => {
      const band = MAX_RUN_PRIORITY - runPriorityOf(e.priority);
      args.push(e.tenantId, jobIdFor(e.item.invocationId), held[i]!.text, band);
    });
    return (await this.call(lane, 'flowlineWindowHold', [6, ...this.factKeys(lane), this.key(lane, 'items'), this.key(lane, 'seq'), ...args])) as unknown[];
  }

  /** The lane's facts, in one round trip. */
  async facts(lane: Lane): Promise<LaneWindowFacts> {
    const raw = (await this.call(lane, 'flowlineWindowFacts', [4, ...this.factKeys(lane), this.key(lane, 'q:'), RELEASE_GRACE_MS])) as unknown[];
    return factsOf(lane, raw);
  }

  /**
   * Pops `take` from the holds when the state is still at `version`, writing `state`.
   * @returns the jobs to hand BullMQ, or null when a peer released first (read again)
   */
  async release(lane: Lane, version: number, take: readonly { tenantId: string; count: number }[], state: WindowState): Promise<HeldJob[] | null> {
    const args: (string | number)[] = [version, JSON.stringify(state), this.key(lane, 'q:'), RELEASE_GRACE_MS];
    for (const t of take) args.push(t.tenantId, t.count);
    const keys = [this.key(lane, 'tenants'), this.key(lane, 'state'), this.key(lane, 'items'), this.key(lane, 'released')];
    const raw = (await this.call(lane, 'flowlineWindowRelease', [4, ...keys, ...args])) as string[] | null;
    if (raw === null) return null;
    return raw.map(heldJobOf);
  }

  /**
   * Jobs now on their lane: their release stamps are cleared with the lane's next window call,
   * or within {@link UNSTAMP_DELAY_MS} when none comes (a lost clear only leaves a stamp to
   * expire with the grace).
   */
  added(lane: Lane, jobs: readonly HeldJob[]): void {
    if (jobs.length === 0) return;
    const ids = this.unstamp.get(lane) ?? [];
    for (const j of jobs) ids.push(j.opts.jobId);
    this.unstamp.set(lane, ids);
    if (!this.unstampTimer) {
      this.unstampTimer = setTimeout(() => void this.flushStamps().catch(() => undefined), UNSTAMP_DELAY_MS);
      this.unstampTimer.unref();
    }
  }

  /** Clears every release stamp {@link added} still owes (the delay's timer, and shutdown). */
  async flushStamps(): Promise<void> {
    if (this.unstampTimer) clearTimeout(this.unstampTimer);
    this.unstampTimer = null;
    const owed = [...this.unstamp];
    this.unstamp.clear();
    await Promise.all(owed.map(([lane, ids]) => this.redis.zrem(this.key(lane, 'released'), ...ids)));
  }

  /** Removes held items (cancelled work); returns the ids that were still held, so never released. */
  async withdraw(invocationIds: readonly string[]): Promise<Set<string>> {
    const gone = new Set<string>();
    if (invocationIds.length === 0) return gone;
    const lanes: Lane[] = ['llm', 'tool'];
    const p = this.redis.pipeline();
    for (const lane of lanes) for (const id of invocationIds) p.hdel(this.key(lane, 'items'), jobIdFor(id));
    const res = (await p.exec()) ?? [];
    res.forEach(([, n], i) => {
      if (n === 1) gone.add(invocationIds[i % invocationIds.length]!);
    });
    return gone;
  }

  /** Which of `invocationIds` wait in a hold, or were released so recently that their job may not be added yet. */
  async heldAmong(invocationIds: readonly string[]): Promise<Set<string>> {
    const held = new Set<string>();
    if (invocationIds.length === 0) return held;
    const ids = invocationIds.map(jobIdFor);
    const lanes: Lane[] = ['llm', 'tool'];
    const replies = await Promise.all(
      lanes.map((lane) => this.run.flowlineWindowHeld(2, this.key(lane, 'items'), this.key(lane, 'released'), RELEASE_GRACE_MS, ...ids) as Promise<number[]>),
    );
    for (const flags of replies) flags.forEach((f, i) => f === 1 && held.add(invocationIds[i]!));
    return held;
  }
}

/** A held item as the hold stores it (`text`) and the job that text stands for. */
function heldForm(e: HoldEntry): { text: string; job: HeldJob } {
  const held = { kind: e.item.kind, data: toWire(e.item), trace: e.trace };
  return { text: JSON.stringify(held), job: jobOf(held) };
}

function heldJobOf(text: string): HeldJob {
  return jobOf(JSON.parse(text) as { kind: string; data: Wire<WorkItem>; trace?: string });
}

function jobOf(held: { kind: string; data: Wire<WorkItem>; trace?: string | undefined }): HeldJob {
  const jobId = jobIdFor(held.data.invocationId);
  return { name: held.kind, data: held.data, opts: held.trace === undefined ? { jobId } : { jobId, telemetry: { metadata: held.trace } } };
}

function factsOf(lane: Lane, raw: unknown[]): LaneWindowFacts {
  const version = Number(raw[0] ?? 0);
  const stateText = String(raw[1] ?? '');
  const waiting = Number(raw[2] ?? 0);
  const tenants: { tenantId: string; backlog: number }[] = [];
  for (let i = 3; i + 1 < raw.length; i += 2) tenants.push({ tenantId: String(raw[i]), backlog: Number(raw[i + 1]) });
  return { lane, version, state: parseState(stateText), waiting, tenants };
}

function parseState(text: string): WindowState {
  if (text === '') return EMPTY_WINDOW_STATE;
  try {
    const v = JSON.parse(text) as Partial<WindowState>;
    const deficits = v.deficits && typeof v.deficits === 'object' ? v.deficits : {};
    return { deficits, cursor: typeof v.cursor === 'string' ? v.cursor : null };
  } catch {
    return EMPTY_WINDOW_STATE;
  }
}
