/**
 * The dispatcher's engine metrics (served on its ops port, ops.ts). Hot-path cost is a
 * counter increment or a histogram observe per tick and per committed plan; whatever the
 * dispatcher already counts (shards, heals, lease renew failures) is read at scrape time.
 *
 * - `flowline_runs_finished_total{status,tenant}`: runs that reached Completed / Failed / Cancelled
 * - `flowline_node_attempts_total{kind,outcome}`: node attempts settled (outcome Succeeded or the failure class)
 * - `flowline_tick_duration_seconds`, `flowline_tick_batch_size`: each tick's wall time and runs taken
 * - `flowline_hop_latency_seconds`: a worker's result (its finishedAt) → the next node's admission to its lane
 * - `flowline_dispatcher_shards_owned{dispatcher}`, `flowline_shard_lease_renew_failures_total{dispatcher}`
 * - `flowline_inflight_healed_total`: Queued/Running nodes whose lost job the in-flight check put back
 * - `flowline_run_tokens_total{tenant}`, `flowline_run_cost_usd_total{tenant}`: model usage as it rolls up
 *   on top-level runs (a child run's usage counts once, on its top-level run, when the child ends)
 * - `flowline_runs_budget_exceeded_total{tenant,budget}`: runs failed BudgetExceeded, by the budget gone past
 * - `flowline_runs_expired_total{tenant}`: runs that ended Failed/Expired, never admitted within PENDING_RUN_TTL_MS
 */
import { Counter, type Registry } from 'prom-client';
import { storedUsage } from '@flowline/graph';
import { metricsOn } from '@flowline/runtime';
import type { CommittedPlan } from './tick';

/** The hooks the dispatcher calls; {@link NO_METRICS} when it runs without an ops port. */
export interface DispatcherMetrics {
  /** one tick: its wall time, ms, and the number of runs it took */
  tick(durationMs: number, batchSize: number): void;
  /** the plans a tick committed, at `now` (epoch ms) when their work goes to the lanes */
  committed(committed: readonly CommittedPlan[], now: number): void;
}

export const NO_METRICS: DispatcherMetrics = { tick() {}, committed() {} };

/** What the scrape reads from the running dispatcher (null before it exists). */
export interface DispatcherReadings {
  id: string;
  shardsOwned(): number;
  leaseRenewFailures(): number;
  healed(): number;
}

const FINISHED = { 'run.completed': 'Completed', 'run.failed': 'Failed', 'run.cancelled': 'Cancelled' } as const;

/** Registers the dispatcher's metrics on `registry`; `readings` is read at each scrape. */
export function createDispatcherMetrics(registry: Registry, readings: () => DispatcherReadings | null): DispatcherMetrics {
  const metric = metricsOn(registry);
  const finished = metric.counter('flowline_runs_finished_total', 'runs that reached a terminal status, by status and tenant', ['status', 'tenant']);
  const attempts = metric.counter('flowline_node_attempts_total', 'node attempts settled, by node kind and outcome (Succeeded or the failure class)', ['kind', 'outcome']);
  const tokens = metric.counter(
    'flowline_run_tokens_total',
    "model tokens (input + output) of runs' LlmCall/Agent/DecisionModel attempts, by tenant (counted on top-level runs, child runs included once ended)",
    ['tenant'],
  );
  const cost = metric.counter('flowline_run_cost_usd_total', 'US dollars of that model usage priced by MODEL_PRICES, by tenant', ['tenant']);
  const budgetExceeded = metric.counter(
    'flowline_runs_budget_exceeded_total',
    'runs failed BudgetExceeded, by tenant and the budget gone past (maxTokens, maxCostUsd, maxWallClockMs, maxAttempts)',
    ['tenant', 'budget'],
  );
  const expired = metric.counter(
    'flowline_runs_expired_total',
    'runs that ended Failed with the class Expired: Pending, never admitted, past PENDING_RUN_TTL_MS; by tenant',
    ['tenant'],
  );
  const tickDuration = metric.histogram(
    'flowline_tick_duration_seconds',
    'wall time of one tick (load, plan, commit, side effects), seconds',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const batchSize = metric.histogram('flowline_tick_batch_size', 'runs taken by one tick', [1, 2, 5, 10, 20, 50, 100, 200, 500]);
  const hop = metric.histogram(
    'flowline_hop_latency_seconds',
    "a worker's result (its finishedAt) to the next node's admission to its lane, seconds",
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  metric.gauge(
    'flowline_dispatcher_shards_owned',
    'shards whose lease this dispatcher holds',
    function () {
      const r = readings();
      if (r) this.set({ dispatcher: r.id }, r.shardsOwned());
    },
    ['dispatcher'],
  );
  scrapedCounter(
    registry,
    { name: 'flowline_shard_lease_renew_failures_total', help: 'shard lease renewals that failed (unconfirmed for most of a lease, the dispatcher drops its shards)' },
    readings,
    (r) => r.leaseRenewFailures(),
  );
  scrapedCounter(
    registry,
    { name: 'flowline_inflight_healed_total', help: 'Queued/Running nodes whose lost job the in-flight check put back on their lane' },
    readings,
    (r) => r.healed(),
  );

  return {
    tick(durationMs, size) {
      tickDuration.observe(durationMs / 1000);
      batchSize.observe(size);
    },
    committed(committed, now) {
      for (const { snapshot, plan } of committed) {
        for (const e of plan.events) {
          if (e.kind === 'node.completed') attempts.inc({ kind: kindOf(snapshot.nodes, e.nodeKey), outcome: 'Succeeded' });
          else if (e.kind === 'node.failed' || e.kind === 'node.interrupted') {
            const cls = e.detail.cause ?? e.detail.class;
            attempts.inc({ kind: kindOf(snapshot.nodes, e.nodeKey), outcome: typeof cls === 'string' ? cls : 'NodeFailed' });
          } else if (e.kind in FINISHED) {
            finished.inc({ status: FINISHED[e.kind as keyof typeof FINISHED], tenant: snapshot.run.tenantId });
            if (e.kind === 'run.failed' && e.detail.class === 'Expired') expired.inc({ tenant: snapshot.run.tenantId });
          }
          if (e.kind === 'run.failed' && e.detail.class === 'BudgetExceeded') {
            budgetExceeded.inc({ tenant: snapshot.run.tenantId, budget: String(e.detail.budget) });
          }
        }
        const usage = plan.run?.set.usage;
        if (usage && snapshot.run.parentRunId === null) {
          const before = storedUsage(snapshot.run.usage);
          const dTokens = usage.inputTokens + usage.outputTokens - before.inputTokens - before.outputTokens;
          const dCost = usage.costUsd - before.costUsd;
          if (dTokens > 0) tokens.inc({ tenant: snapshot.run.tenantId }, dTokens);
          if (dCost > 0) cost.inc({ tenant: snapshot.run.tenantId }, dCost);
        }
        if (plan.enqueue.length > 0 && snapshot.results.length > 0) {
          let last = 0;
          for (const r of snapshot.results) if (r.outcome.finishedAt > last) last = r.outcome.finishedAt;
          hop.observe(Math.max(0, now - last) / 1000);
        }
      }
    },
  };
}

function kindOf(nodes: readonly { nodeKey: string; kind: string }[], key: string | null): string {
  return nodes.find((n) => n.nodeKey === key)?.kind ?? 'unknown';
}

/** A counter whose value is a running total the dispatcher keeps: it grows by the difference at each scrape. */
function scrapedCounter(
  registry: Registry,
  meta: { name: string; help: string },
  readings: () => DispatcherReadings | null,
  read: (r: DispatcherReadings) => number,
): void {
  let seen = 0;
  new Counter({
    ...meta,
    labelNames: ['dispatcher'] as const,
    registers: [registry],
    collect() {
      const r = readings();
      if (!r) return;
      const n = read(r);
      this.inc({ dispatcher: r.id }, Math.max(0, n - seen));
      seen = n;
    },
  });
}
