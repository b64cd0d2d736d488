/**
 * In-memory inbox of the shard owner: which runs need a tick, and the worker
 * reports (starts and outcomes) not yet committed for them. Reports are keyed by
 * invocation id, so a duplicate report (event plus reconcile) is stored once and a
 * report the planner ignores is simply consumed. Nothing here is the truth: losing
 * it costs a re-check against BullMQ, never a run.
 */
import type { Lane, RunSnapshot, WindowState, WorkResult, WorkStarted } from '@flowline/graph';
import { EMPTY_WINDOW_STATE, planRelease } from '@flowline/graph';

interface RunInbox {
  results: Map<string, WorkResult>;
  started: Map<string, WorkStarted>;
}

/** Where an invocation belongs; learned from enqueues, snapshots and reconciles. */
export interface InvocationRef {
  runId: string;
  nodeKey: string;
  /** the lane its job was put on, when this replica enqueued it (a finished job frees space there) */
  lane?: Lane;
}

export interface PendingWorkOptions {
  /**
   * A start alone makes its run ready only after this long (0: at once): a quick job's
   * outcome arrives first and both commit in one tick, and the tick loop stays free for
   * outcomes, which move runs forward. Outcomes and wakes are never delayed.
   */
  startDelayMs?: number;
  /** tenants' shares of the tick batch (TENANT_WEIGHTS, as the dispatch window's); unlisted: 1 */
  weights?: Readonly<Record<string, number>>;
  /** most run → tenant hints kept (the oldest go first; a run without one is ticked as tenant unknown) */
  maxTenantHints?: number;
}

/** The bucket of ready runs whose tenant this replica has not learned yet. */
const UNKNOWN_TENANT = '';

export class PendingWork {
  /** ready runs by tenant, each in the order they became ready */
  private readonly ready = new Map<string, Set<string>>();
  /** the tenant bucket of each ready run */
  private readonly readyTenant = new Map<string, string>();
  /** run → tenant, learned from wakes that name it and from loaded snapshots (a hint: losing it only makes the run's tenant unknown) */
  private readonly tenants = new Map<string, string>();
  private readonly maxTenantHints: number;
  private readonly weights: Readonly<Record<string, number>>;
  /** the tick order's round robin (the same weighted deficit round robin as the dispatch window, libs/graph planRelease) */
  private order: WindowState = EMPTY_WINDOW_STATE;
  private readonly inbox = new Map<string, RunInbox>();
  private readonly invocations = new Map<string, InvocationRef>();
  /** runs with a start only, by when they become ready (insertion order is due order) */
  private readonly deferred = new Map<string, number>();
  private deferTimer: NodeJS.Timeout | null = null;
  private readonly startDelayMs: number;
  private waiter: (() => void) | null = null;
  private listener: (() => void) | null = null;

  constructor(opts: PendingWorkOptions = {}) {
    this.startDelayMs = opts.startDelayMs ?? 0;
    this.weights = opts.weights ?? {};
    this.maxTenantHints = opts.maxTenantHints ?? 100_000;
  }

  /** Remembers the tenant of `runId` (a ready run of unknown tenant keeps its place until taken). */
  rememberTenant(runId: string, tenantId: string): void {
    if (this.maxTenantHints === 0 || this.tenants.get(runId) === tenantId) return;
    this.tenants.delete(runId);
    this.tenants.set(runId, tenantId);
    if (this.tenants.size > this.maxTenantHints) this.tenants.delete(this.tenants.keys().next().value!);
  }

  /** Called whenever a run becomes ready (the tick loop's wake). */
  onReady(listener: () => void): void {
    this.listener = listener;
  }

  /** Marks runs as needing a tick, each in its tenant's turn when known (`rememberTenant`); resolves a pending `whenReady`. */
  markReady(runIds: Iterable<string>): void {
    let any = false;
    for (const id of runIds) {
      any = true;
      if (this.readyTenant.has(id)) continue;
      const tenant = this.tenants.get(id) ?? UNKNOWN_TENANT;
      let bucket = this.ready.get(tenant);
      if (!bucket) {
        bucket = new Set();
        this.ready.set(tenant, bucket);
      }
      bucket.add(id);
      this.readyTenant.set(id, tenant);
    }
    if (any) this.listener?.();
    if (any && this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w();
    }
  }

  get readyCount(): number {
    return this.readyTenant.size;
  }

  /**
   * Takes up to `limit` ready runs: oldest first within a tenant; across tenants by the
   * weighted round robin of `planRelease`, so one tenant's burst of new runs or
   * reports does not queue another tenant's runs behind it in the tick loop.
   */
  takeReady(limit: number): string[] {
    const runIds: string[] = [];
    if (this.ready.size === 1) {
      const [tenant, bucket] = this.ready.entries().next().value!;
      this.takeFrom(tenant, bucket, limit, runIds);
      return runIds;
    }
    const decision = planRelease({
      capacity: limit,
      tenants: [...this.ready].map(([tenantId, bucket]) => ({ tenantId, backlog: bucket.size, weight: this.weights[tenantId] ?? 1 })),
      state: this.order,
    });
    this.order = decision.state;
    for (const { tenantId, count } of decision.take) {
      const bucket = this.ready.get(tenantId);
      if (bucket) this.takeFrom(tenantId, bucket, count, runIds);
    }
    return runIds;
  }

  private takeFrom(tenant: string, bucket: Set<string>, count: number, into: string[]): void {
    let n = 0;
    for (const id of bucket) {
      if (n >= count) break;
      into.push(id);
      bucket.delete(id);
      this.readyTenant.delete(id);
      this.deferred.delete(id);
      n++;
    }
    if (bucket.size === 0) this.ready.delete(tenant);
  }

  /** Resolves when a run is ready or after `ms`, whichever is first. */
  whenReady(ms: number): Promise<void> {
    if (this.readyTenant.size > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve();
      }, ms);
      this.waiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Wakes a pending `whenReady` at once and cancels the start timer (shutdown). */
  interrupt(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
    if (this.deferTimer) clearTimeout(this.deferTimer);
    this.deferTimer = null;
  }

  /** Remembers where an invocation belongs; a lane learned earlier is kept when `ref` has none. */
  rememberInvocation(invocationId: string, ref: InvocationRef): void {
    const prev = ref.lane === undefined ? this.invocations.get(invocationId) : undefined;
    this.invocations.set(invocationId, prev?.lane !== undefined && prev.runId === ref.runId ? { ...ref, lane: prev.lane } : ref);
  }

  lookupInvocation(invocationId: string): InvocationRef | undefined {
    return this.invocations.get(invocationId);
  }

  /** True when an outcome for the invocation waits to be committed. */
  hasResult(runId: string, invocationId: string): boolean {
    return this.inbox.get(runId)?.results.has(invocationId) ?? false;
  }

  /** Records an outcome and marks its run ready. */
  addResult(runId: string, result: WorkResult): void {
    this.box(runId).results.set(result.invocationId, result);
    this.markReady([runId]);
  }

  /** Records a start (Queued → Running); its run is ready after `startDelayMs` unless it ticks sooner. */
  addStarted(runId: string, started: WorkStarted): void {
    const box = this.box(runId);
    if (box.results.has(started.invocationId)) return;
    box.started.set(started.invocationId, started);
    if (this.startDelayMs <= 0) {
      this.markReady([runId]);
      return;
    }
    if (this.readyTenant.has(runId) || this.deferred.has(runId)) return;
    this.deferred.set(runId, Date.now() + this.startDelayMs);
    this.deferTimer ??= setTimeout(() => this.releaseDeferred(), this.startDelayMs);
  }

  /** Makes the runs whose start delay is over ready; waits again for the rest. */
  private releaseDeferred(): void {
    this.deferTimer = null;
    const now = Date.now();
    const due: string[] = [];
    for (const [id, at] of this.deferred) {
      if (at > now) {
        this.deferTimer = setTimeout(() => this.releaseDeferred(), at - now);
        break;
      }
      due.push(id);
      this.deferred.delete(id);
    }
    this.markReady(due);
  }

  /** Copies the run's uncommitted reports into its snapshot (results win over starts). */
  attach(snapshot: RunSnapshot): RunSnapshot {
    const box = this.inbox.get(snapshot.run.id);
    if (!box) return snapshot;
    const started = [...box.started.values()].filter((s) => !box.results.has(s.invocationId));
    return {
      ...snapshot,
      results: [...snapshot.results, ...box.results.values()],
      started: [...snapshot.started, ...started],
    };
  }

  /**
   * Drops reports the planner consumed (applied or ignored) once committed. Only reports
   * that were attached to the planned snapshot go: an outcome that arrived during the
   * tick shares its invocation id with the consumed start and must stay for the next tick.
   */
  consume(runId: string, invocationIds: readonly string[], planned: RunSnapshot): void {
    const box = this.inbox.get(runId);
    if (!box) return;
    const plannedResults = new Set(planned.results.map((r) => r.invocationId));
    const plannedStarts = new Set(planned.started.map((r) => r.invocationId));
    for (const id of invocationIds) {
      // A consumed outcome ends the invocation; a consumed start leaves it in flight.
      if (plannedResults.has(id) && box.results.delete(id)) this.invocations.delete(id);
      if (plannedStarts.has(id)) box.started.delete(id);
    }
    if (box.results.size === 0 && box.started.size === 0) this.inbox.delete(runId);
  }

  private box(runId: string): RunInbox {
    let box = this.inbox.get(runId);
    if (!box) {
      box = { results: new Map(), started: new Map() };
      this.inbox.set(runId, box);
    }
    return box;
  }

  /** Forgets a run (its shard was lost, or it is gone). */
  forgetRun(runId: string): void {
    this.inbox.delete(runId);
    this.unready(runId);
    this.deferred.delete(runId);
    this.tenants.delete(runId);
  }

  private unready(runId: string): void {
    const tenant = this.readyTenant.get(runId);
    if (tenant === undefined) return;
    this.readyTenant.delete(runId);
    const bucket = this.ready.get(tenant);
    bucket?.delete(runId);
    if (bucket?.size === 0) this.ready.delete(tenant);
  }

  /** Forgets every run the predicate rejects (shards lost). */
  retainRuns(keep: (runId: string) => boolean): void {
    for (const id of [...this.readyTenant.keys()]) if (!keep(id)) this.forgetRun(id);
    for (const id of [...this.tenants.keys()]) if (!keep(id)) this.tenants.delete(id);
    for (const id of [...this.inbox.keys()]) if (!keep(id)) this.forgetRun(id);
    for (const id of [...this.deferred.keys()]) if (!keep(id)) this.forgetRun(id);
    for (const [inv, ref] of [...this.invocations]) if (!keep(ref.runId)) this.invocations.delete(inv);
  }
}
