/**
 * Tells a worker's wake from a foreign one. A lane worker publishes `{ runId }` on the wake
 * channel after each job, while its outcome also arrives through QueueEvents; every other
 * wake (API intent, operator action, child run, peer) may mean the run changed in the store,
 * so the owner must read it afresh. The two signals travel on different connections and
 * arrive in either order: an outcome then its wake match at once; a wake of a cached run
 * is held up to `holdMs` for its outcome before it is treated as foreign. Matching is a
 * latency hint only: a wake wrongly taken for a worker's is healed by the due sweep (every
 * foreign change also sets `wake_at = now()`).
 */

/** How long an outcome's wake is expected after the outcome. */
const EXPECT_WINDOW_MS = 2_000;

interface Count {
  count: number;
  at: number;
}

export class WakeMatcher {
  private readonly expected = new Map<string, Count>();
  private readonly held = new Map<string, Count>();
  private timer: NodeJS.Timeout | null = null;

  /**
   * @param holdMs how long a wake waits for its outcome (0: never held)
   * @param foreign receives the runs whose held wake found no outcome
   */
  constructor(
    private readonly holdMs: number,
    private readonly foreign: (runIds: string[]) => void,
  ) {}

  /** An outcome of the run arrived through QueueEvents: its worker's wake is expected. */
  outcome(runId: string, now = Date.now()): void {
    if (take(this.held, runId, now, Infinity)) return;
    const e = this.expected.get(runId);
    this.expected.set(runId, { count: (e && now - e.at < EXPECT_WINDOW_MS ? e.count : 0) + 1, at: now });
  }

  /** True when the wake is the echo of an outcome already received (consumed once). */
  isWorkerWake(runId: string, now = Date.now()): boolean {
    return take(this.expected, runId, now, EXPECT_WINDOW_MS);
  }

  /** Holds a wake of a cached run for its outcome; without one within `holdMs` it is foreign. */
  hold(runId: string, now = Date.now()): void {
    if (this.holdMs <= 0) {
      this.foreign([runId]);
      return;
    }
    const h = this.held.get(runId);
    this.held.set(runId, { count: (h?.count ?? 0) + 1, at: now });
    this.timer ??= setTimeout(() => this.flush(), this.holdMs);
  }

  /** Treats every held wake as foreign now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ids = [...this.held.keys()];
    this.held.clear();
    if (ids.length > 0) this.foreign(ids);
  }

  /** Drops expectations older than their window (called from the sweep). */
  prune(now = Date.now()): void {
    for (const [id, e] of [...this.expected]) if (now - e.at >= EXPECT_WINDOW_MS) this.expected.delete(id);
  }

  /** Stops the hold timer, dropping held wakes (shutdown). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.held.clear();
    this.expected.clear();
  }
}

function take(map: Map<string, Count>, runId: string, now: number, windowMs: number): boolean {
  const e = map.get(runId);
  if (!e) return false;
  const live = now - e.at < windowMs;
  if (!live || e.count <= 1) map.delete(runId);
  else e.count--;
  return live;
}
