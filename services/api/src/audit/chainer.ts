/**
 * Chains audit rows: shortly after a request recorded its row (within AUDIT_CHAIN_DELAY_MS, so a
 * busy tenant's requests share a pass; one pass per tenant at a time in this process, a kick
 * while a pass runs asks for one more pass after it), before each read, and by a sweep that
 * chains what no kick did (another replica ended mid-pass, a row past its grace) and prunes rows
 * past AUDIT_RETENTION_DAYS. Passes of several replicas serialize on the tenant's advisory lock
 * (flowline_audit_chain), never on anything a run start's transaction holds.
 */
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { chainAuditFully, pruneAudit, tenantsWithAuditChain, tenantsWithPendingAudit } from '@flowline/db';

/** The audit options the API runs with. */
export interface AuditOptions {
  /** AUDIT_RETENTION_DAYS: 0 keeps rows forever @default 365 */
  retentionDays: number;
  /** AUDIT_CHAIN_GRACE_S @default 60 */
  chainGraceS: number;
  /** AUDIT_SWEEP_MS @default 5000 */
  sweepMs: number;
  /** AUDIT_CHAIN_DELAY_MS @default 50 */
  chainDelayMs: number;
}

export const DEFAULT_AUDIT_OPTIONS: AuditOptions = { retentionDays: 365, chainGraceS: 60, sweepMs: 5_000, chainDelayMs: 50 };

/** Chains one tenant's rows on demand, coalescing kicks; see the module comment. */
export class AuditChainer {
  private readonly state = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly pool: Pool,
    private readonly options: AuditOptions,
    private readonly logger: Logger,
  ) {}

  /** Asks for a pass over `tenant`'s ready rows; answers when a pass that started after the ask ended. */
  kick(tenant: string): Promise<void> {
    const s = this.state.get(tenant);
    if (s !== undefined) {
      s.again = true;
      return s.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          await chainAuditFully(this.pool, tenant, this.options.chainGraceS);
        } while (entry.again);
      } catch (err) {
        this.logger.warn({ err, tenant }, 'audit chaining failed; the sweep chains the rows later');
      } finally {
        this.state.delete(tenant);
      }
    })();
    this.state.set(tenant, entry);
    return entry.done;
  }

  /**
   * Asks for a pass over `tenant`'s rows within `chainDelayMs`: what a request does after its row
   * is recorded. The requests of a busy tenant within the delay share one pass, instead of each
   * paying a statement of its own (run starts are the hot path).
   */
  soon(tenant: string): void {
    if (this.timers.has(tenant)) return;
    const timer = setTimeout(() => {
      this.timers.delete(tenant);
      void this.kick(tenant);
    }, this.options.chainDelayMs);
    timer.unref();
    this.timers.set(tenant, timer);
  }

  /** One sweep: chain every tenant's ready rows, then prune rows past retention. */
  async sweep(now = new Date()): Promise<void> {
    for (const tenant of await tenantsWithPendingAudit(this.pool)) await this.kick(tenant);
    if (this.options.retentionDays === 0) return;
    const cutoff = new Date(now.getTime() - this.options.retentionDays * 86_400_000);
    for (const tenant of await tenantsWithAuditChain(this.pool)) {
      const pruned = await pruneAudit(this.pool, tenant, cutoff);
      if (pruned > 0) this.logger.info({ tenant, pruned }, 'audit rows past AUDIT_RETENTION_DAYS pruned');
    }
  }

  /** Sweeps every `sweepMs` until the answered stop is called. */
  start(): () => Promise<void> {
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    let running: Promise<unknown> = Promise.resolve();
    const tick = () => {
      if (stopped) return;
      running = this.sweep()
        .catch((err: unknown) => this.logger.warn({ err }, 'audit sweep failed; retried next sweep'))
        .finally(() => {
          if (!stopped) timer = setTimeout(tick, this.options.sweepMs);
        });
    };
    timer = setTimeout(tick, this.options.sweepMs);
    return async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const t of this.timers.values()) clearTimeout(t);
      this.timers.clear();
      await running;
      await Promise.all([...this.state.values()].map((s) => s.done));
    };
  }
}
