/**
 * The dispatch window's glue: ready work is held per tenant in the shared window
 * (libs/queue WindowStore) and handed to its BullMQ lane only while the lane's waiting depth
 * is under its target. What to release is decided by `planRelease` (libs/graph, pure); this
 * module only gathers the facts, applies the decision by compare-and-set and adds the jobs.
 *
 * When it runs: right after a commit that queued work (so a lone tenant on an empty lane
 * goes out in the same tick; when everything held fits, the hold script releases it in the
 * hold's own round trip, and on a lane where nothing is held it never writes it into the hold),
 * after the tick that follows a finished job of this replica's
 * runs (space freed on that job's lane; the window is shared, so the release may be another
 * run's or tenant's work), and on every sweep as a backstop for space freed by jobs of runs
 * other replicas own.
 *
 * A finished job only marks its lane freed (`markFreed`); the tick loop releases the marked
 * lanes after its tick (`flushFreed`). The tick that commits the finished job's successor
 * holds that work on the same lane, and a hold reads the lane's facts and releases what fits
 * anyway, so it clears the mark: a hop costs one facts read instead of one per lane on top
 * of the hold. A mark set after a hold was sent stays for the flush.
 */
import type { Lane } from '@flowline/graph';
import { planRelease, windowCapacity } from '@flowline/graph';
import { addLaneJobs, LANES, WindowStore, type HeldJob, type HoldEntry, type LaneQueues, type LaneWindowFacts } from '@flowline/queue';
import type { RedisConnection } from '@flowline/queue';
import type { Logger } from 'pino';

/** Work to hold, with the tenant its run belongs to (and its dispatch span's context when traced). */
export type TenantWork = HoldEntry;

export interface ReleaseWindowDeps {
  redis: RedisConnection;
  prefix: string;
  queues: LaneQueues;
  /** target waiting depth of each lane */
  targets: Readonly<Record<Lane, number>>;
  /** share weights; a tenant not listed weighs 1 */
  weights: Readonly<Record<string, number>>;
  log: Logger;
}

/** Compare-and-set attempts of one release before it is left to the next trigger. */
const RELEASE_TRIES = 5;

export interface ReleaseWindow {
  /** Holds work and releases what fits at once. */
  submit(work: readonly TenantWork[]): Promise<void>;
  /** Releases what fits on every lane (coalesced: calls during a pass join the next one). */
  nudge(): Promise<void>;
  /** Space may have freed on `lanes` (a job finished): released by the next `submit` on the lane or `flushFreed`. */
  markFreed(lanes: readonly Lane[]): void;
  /** Releases what fits on the lanes marked freed that no `submit` has read since. */
  flushFreed(): Promise<void>;
  /** Removes held work (cancelled); returns the ids that were held and so will never run. */
  withdraw(invocationIds: readonly string[]): Promise<Set<string>>;
  heldAmong(invocationIds: readonly string[]): Promise<Set<string>>;
  /** Resolves once no release pass runs (shutdown waits for it before closing the queues). */
  idle(): Promise<void>;
  totals(): { released: number; conflicts: number };
}

export function createReleaseWindow(d: ReleaseWindowDeps): ReleaseWindow {
  const store = new WindowStore(d.redis, d.prefix);
  const totals = { released: 0, conflicts: 0 };
  let pass: Promise<void> | null = null;
  let again = false;
  /** lanes where a job finished since their facts were last read by a hold */
  const freed = new Set<Lane>();

  /** One lane: decide from `facts`, pop by compare-and-set, add; re-read on a lost race. */
  async function releaseLane(lane: Lane, first: LaneWindowFacts | null): Promise<void> {
    let facts = first;
    for (let i = 0; i < RELEASE_TRIES; i++) {
      facts ??= await store.facts(lane);
      if (facts.tenants.length === 0) return;
      const decision = planRelease({
        capacity: windowCapacity(d.targets[lane], facts.waiting),
        tenants: facts.tenants.map((t) => ({ ...t, weight: d.weights[t.tenantId] ?? 1 })),
        state: facts.state,
      });
      if (decision.take.length === 0) return;
      const jobs = await store.release(lane, facts.version, decision.take, decision.state);
      if (jobs === null) {
        totals.conflicts++;
        facts = null;
        continue;
      }
      await add(lane, jobs);
      const planned = decision.take.reduce((s, t) => s + t.count, 0);
      // items withdrawn while held were popped as nothing: their space is still free
      if (jobs.length === planned) return;
      facts = null;
    }
  }

  /** Hands released jobs to their lane and clears their release stamps. */
  async function add(lane: Lane, jobs: HeldJob[]): Promise<void> {
    if (jobs.length > 0) {
      await addLaneJobs(d.queues[lane], jobs);
      store.added(lane, jobs);
    }
    totals.released += jobs.length;
  }

  async function submit(work: readonly TenantWork[]): Promise<void> {
    const byLane = new Map<Lane, TenantWork[]>();
    for (const w of work) byLane.set(w.item.lane, [...(byLane.get(w.item.lane) ?? []), w]);
    await Promise.all(
      [...byLane].map(async ([lane, entries]) => {
        // the hold is sent now and reads the lane's facts after every job that finished before it
        freed.delete(lane);
        // everything held fits: released by the hold itself (no decision round trip)
        const held = await store.holdOrRelease(lane, entries, d.targets[lane]);
        if ('released' in held) return add(lane, held.released);
        return releaseLane(lane, held.facts);
      }),
    );
  }

  async function flushFreed(): Promise<void> {
    if (freed.size === 0) return;
    const lanes = [...freed];
    freed.clear();
    await Promise.all(lanes.map((lane) => releaseLane(lane, null)));
  }

  async function nudge(): Promise<void> {
    if (pass) {
      again = true;
      return pass;
    }
    pass = (async () => {
      try {
        do {
          again = false;
          await Promise.all(LANES.map((lane) => releaseLane(lane, null)));
        } while (again);
      } finally {
        pass = null;
      }
    })();
    return pass;
  }

  return {
    submit,
    nudge,
    markFreed: (lanes) => {
      for (const lane of lanes) freed.add(lane);
    },
    flushFreed,
    withdraw: (ids) => store.withdraw(ids),
    heldAmong: (ids) => store.heldAmong(ids),
    idle: async () => {
      await pass?.catch(() => undefined);
      await store.flushStamps().catch(() => undefined);
    },
    totals: () => ({ ...totals }),
  };
}
