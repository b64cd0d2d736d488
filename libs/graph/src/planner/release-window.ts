/**
 * The dispatch window's decision: which tenants' held work a lane takes next.
 *
 * Ready lane work stays Queued in Postgres and waits in a per-tenant hold; it is released
 * to its BullMQ lane only while the lane's waiting depth is under a target, so the lane
 * never holds a backlog its FIFO would serve unfairly. What is released is decided here by
 * weighted deficit round robin (Shreedhar & Varghese) over unit-cost items:
 * - a tenant visited afresh earns its weight in credit; each released item costs one;
 * - a visit ends when its credit is spent (the cursor moves on) or the window is full (the
 *   cursor stays, so the next release resumes the same visit with the credit left);
 * - a tenant whose hold empties loses its credit (no banking while idle) and drops out, so
 *   its share goes to the busy tenants: the window is work-conserving — every call releases
 *   exactly min(free space, total backlog);
 * - when everything held fits, nobody is arbitrated: all of it goes, every credit is
 *   forgotten and the cursor stays ({@link releasesEverything}).
 * Pure: the caller gathers the facts (depth, backlogs, shared state) and applies the result
 * with a compare-and-set on the state's version.
 */
import { parseTenantList } from '../tenant-list';

/** A tenant with held work on the lane. */
export interface WindowTenant {
  tenantId: string;
  /** items held (> 0 to take part) */
  backlog: number;
  /** share weight, a positive integer */
  weight: number;
}

/** The round robin's memory between releases, shared by every dispatcher. */
export interface WindowState {
  /** credit left of an interrupted visit, per tenant still holding work */
  deficits: Record<string, number>;
  /** the tenant visited next (its visit resumes when it holds credit) */
  cursor: string | null;
}

export interface ReleaseFacts {
  /** items the lane may take now: target − waiting depth, floored at 0 */
  capacity: number;
  tenants: readonly WindowTenant[];
  state: WindowState;
}

export interface ReleaseDecision {
  /** how many items to take from each tenant's hold, in release order */
  take: { tenantId: string; count: number }[];
  state: WindowState;
}

export const EMPTY_WINDOW_STATE: WindowState = Object.freeze({ deficits: Object.freeze({}) as Record<string, number>, cursor: null });

/** Free space of a lane: `target − waiting`, never negative. */
export function windowCapacity(target: number, waiting: number): number {
  return Math.max(0, Math.floor(target) - Math.max(0, Math.floor(waiting)));
}

/** The tenants holding work, by id, with what they hold (bad backlogs drop out) and their weights. */
function holding(tenants: readonly WindowTenant[]): { id: string; left: number; weight: number }[] {
  return tenants
    .filter((t) => Number.isFinite(t.backlog) && t.backlog >= 1)
    .map((t) => ({ id: t.tenantId, left: Math.floor(t.backlog), weight: weightOf(t.weight) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** True when `capacity` takes all of `held` (> 0) items. */
function fitsAll(capacity: number, held: number): boolean {
  return held > 0 && Number.isFinite(capacity) && Math.floor(capacity) >= held;
}

const heldIn = (order: readonly { left: number }[]) => order.reduce((n, t) => n + t.left, 0);

/**
 * True when the lane has room for everything held: there is nothing to arbitrate, so the
 * release takes every tenant's whole hold, forgets every credit and keeps the cursor (see
 * {@link planRelease}). The window's hold script applies this one rule in Redis itself (libs/queue
 * `dispatch-window.ts` mirrors it), so work that fits goes out without a decision round trip.
 */
export function releasesEverything(facts: Pick<ReleaseFacts, 'capacity' | 'tenants'>): boolean {
  return fitsAll(facts.capacity, heldIn(holding(facts.tenants)));
}

/** Decides one release (see the module comment). Never throws; bad numbers count as 0 (weight as 1). */
export function planRelease(facts: ReleaseFacts): ReleaseDecision {
  const order = holding(facts.tenants);
  if (fitsAll(facts.capacity, heldIn(order))) {
    return { take: order.map((t) => ({ tenantId: t.id, count: t.left })), state: { deficits: {}, cursor: facts.state.cursor } };
  }
  const deficits: Record<string, number> = {};
  for (const t of order) {
    const d = facts.state.deficits[t.id];
    deficits[t.id] = typeof d === 'number' && Number.isFinite(d) && d > 0 ? Math.floor(d) : 0;
  }
  let capacity = Number.isFinite(facts.capacity) ? Math.max(0, Math.floor(facts.capacity)) : 0;
  const taken = new Map<string, number>();
  let at = startIndex(order.map((t) => t.id), facts.state.cursor);
  let active = order.length;
  while (capacity > 0 && active > 0) {
    const t = order[at]!;
    if (t.left > 0) {
      if (deficits[t.id]! < 1) deficits[t.id] = deficits[t.id]! + t.weight;
      const n = Math.min(deficits[t.id]!, t.left, capacity);
      t.left -= n;
      capacity -= n;
      deficits[t.id] = deficits[t.id]! - n;
      if (n > 0) taken.set(t.id, (taken.get(t.id) ?? 0) + n);
      if (t.left === 0) {
        deficits[t.id] = 0;
        active--;
      } else if (deficits[t.id]! >= 1) break; // window full mid-visit: resume here next time
    }
    at = (at + 1) % order.length;
  }
  const cursor = order.length === 0 ? facts.state.cursor : nextHolding(order, at);
  const kept: Record<string, number> = {};
  for (const t of order) if (t.left > 0 && deficits[t.id]! > 0) kept[t.id] = deficits[t.id]!;
  return { take: [...taken].map(([tenantId, count]) => ({ tenantId, count })), state: { deficits: kept, cursor } };
}

function weightOf(w: number): number {
  return Number.isFinite(w) && w >= 1 ? Math.floor(w) : 1;
}

/** The cursor's tenant when it still holds work, else the first tenant after it (circular, by id). */
function startIndex(ids: string[], cursor: string | null): number {
  if (cursor === null || ids.length === 0) return 0;
  const i = ids.findIndex((id) => id >= cursor);
  return i < 0 ? 0 : i;
}

/** The id the next release starts from: the tenant at `at` or the next one still holding work. */
function nextHolding(order: { id: string; left: number }[], at: number): string | null {
  for (let k = 0; k < order.length; k++) {
    const t = order[(at + k) % order.length]!;
    if (t.left > 0) return t.id;
  }
  return order[at % order.length]?.id ?? null;
}

/** Thrown by {@link parseTenantWeights} for a malformed list. */
export class TenantWeightsError extends Error {
  readonly code = 'TenantWeightsInvalid';
  constructor(message: string) {
    super(message);
    this.name = 'TenantWeightsError';
  }
}

/** Largest weight a tenant may have. */
export const MAX_TENANT_WEIGHT = 1000;

/**
 * Parses `TENANT_WEIGHTS`: `tenant=weight` pairs separated by commas (`a=3,b=1`), weights
 * integers 1–{@link MAX_TENANT_WEIGHT}; an empty text means every tenant weighs 1.
 * @throws TenantWeightsError naming the bad entry
 */
export function parseTenantWeights(text: string): Record<string, number> {
  return parseTenantList(text, {
    valueName: 'weight',
    outOfRange: (tenant, weight) => (weight < 1 || weight > MAX_TENANT_WEIGHT ? `weight of '${tenant}' must be 1–${MAX_TENANT_WEIGHT}` : null),
    fail: (message) => new TenantWeightsError(message),
  });
}
