/**
 * Shard leases: claims and renews every third of the lease on the database clock,
 * reports gained and lost shards. A renewal that cannot be confirmed within the
 * lease drops every shard locally at once, because the database may already have
 * handed them to another replica.
 */
import type { Logger } from 'pino';

export interface LeaseStore {
  claim(): Promise<number[]>;
  release(): Promise<void>;
}

export interface LeaseHandlers {
  gained(shards: number[]): Promise<void>;
  lost(shards: number[]): void;
}

export class LeaseKeeper {
  private owned = new Set<number>();
  private relinquished = false;
  private lastConfirmedAt = 0;
  private inFlight: Promise<void> | null = null;
  /** renewals that failed since the process started (a metric reads it) */
  renewFailures = 0;

  constructor(
    private readonly store: LeaseStore,
    private readonly leaseMs: number,
    private readonly handlers: LeaseHandlers,
    private readonly log: Logger,
  ) {}

  /** Shards this replica may tick right now. */
  get shards(): ReadonlySet<number> {
    return this.owned;
  }

  owns(shard: number): boolean {
    return this.owned.has(shard);
  }

  /** Service start: nothing to open. */
  start(): void {}

  /** One claim/renew round (a Service step: never more work waiting). */
  async runOnce(): Promise<boolean> {
    this.inFlight ??= this.renew().finally(() => {
      this.inFlight = null;
    });
    await this.inFlight;
    return false;
  }

  /** How often to renew: a third of the lease. */
  get renewEveryMs(): number {
    return Math.max(50, Math.floor(this.leaseMs / 3));
  }

  /** Stops renewing; with `release`, hands the shards back so peers take them at once. */
  async relinquish(opts: { release: boolean }): Promise<void> {
    this.relinquished = true;
    await this.inFlight;
    const lost = [...this.owned];
    this.owned = new Set();
    if (lost.length) this.handlers.lost(lost);
    if (opts.release) await this.store.release();
  }

  /** Service stop: nothing to do; `relinquish` decides whether leases are released. */
  stop(): void {}

  private async renew(): Promise<void> {
    const startedAt = Date.now();
    let claimed: number[];
    try {
      claimed = await this.store.claim();
    } catch (err) {
      this.renewFailures++;
      this.log.warn({ err }, 'shard lease renewal failed');
      if (this.relinquished) return;
      if (Date.now() - this.lastConfirmedAt > this.leaseMs * 0.8) this.apply([]);
      return;
    }
    if (this.relinquished) return;
    this.lastConfirmedAt = startedAt;
    const gained = this.apply(claimed);
    // Reconciling runs beside the renewals: a long reconcile must never let the lease lapse.
    if (gained.length) {
      this.handlers.gained(gained).catch((err: unknown) => this.log.error({ err, shards: gained }, 'reconcile of gained shards failed'));
    }
  }

  private apply(claimed: number[]): number[] {
    const next = new Set(claimed);
    const lost = [...this.owned].filter((s) => !next.has(s));
    const gained = claimed.filter((s) => !this.owned.has(s));
    this.owned = next;
    if (lost.length) {
      this.log.info({ shards: lost }, 'shards lost');
      this.handlers.lost(lost);
    }
    if (gained.length) this.log.info({ shards: gained }, 'shards gained');
    return gained;
  }
}
