/**
 * Dispatcher configuration: one schema built from the shared option shapes of
 * CONTRACT §7 plus the dispatcher's own, parsed once in main.ts.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  connectionOptions,
  coreOptions,
  defineConfig,
  backlogOptions,
  dispatchOptions,
  encryptionOptions,
  resealOptions,
  logOptions, tracingOptions,
  opsOptions,
  signedLinkOptions,
  toCoreOptions,
} from '@flowline/runtime';
import { MAX_RETENTION_DAYS, parseModelPrices, parseTenantRetention, parseTenantWeights, type CoreOptions, type Lane, type ModelPrices } from '@flowline/graph';

const int = (def: number, min: number, description: string) =>
  z.coerce.number().int().min(min).default(def).describe(description);

/** A `tenant=value` list option (default empty) that `parse` must accept; its error message is the issue. */
function parsedListOption(parse: (text: string) => unknown, description: string) {
  return z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      try {
        parse(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe(description);
}

/** Options only the dispatcher reads. */
export const dispatcherOwnOptions = {
  QUEUE_PREFIX: z.string().min(1).default('{flowline}').describe('BullMQ key prefix shared by dispatchers and workers'),
  DISPATCHER_ID: z
    .string()
    .min(1)
    .default(() => `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`)
    .describe('identity of this replica in shard_leases and dispatchers'),
  SHARD_LEASE_MS: int(4000, 300, 'shard lease length, ms; renewed every third of it; the shards of a dispatcher that stops renewing (hung, or its liveness lock unknown) are taken over within about this long plus a third'),
  DISPATCHER_LIVENESS_PROBE_MS: int(
    500,
    0,
    "how often a dispatcher checks that its peers' processes live, ms: each holds a session advisory lock on a connection of its own, which Postgres releases the moment the process dies (even by SIGKILL), and a peer that lost it has its shards taken at once instead of when its lease ends (0: no lock and no check; behind a proxy that pools sessions per transaction, such as PgBouncer in transaction mode, set 0)",
  ),
  DISPATCH_BATCH_SIZE: int(200, 1, 'most runs committed in one tick transaction'),
  INFLIGHT_CHECK_EVERY_SWEEPS: int(10, 1, 'every Nth sweep re-checks in-flight work against BullMQ'),
  DISPATCH_START_DELAY_MS: int(
    20,
    0,
    'a job start alone is committed after this long (0: at once); a quick outcome arriving first commits with it in one tick',
  ),
  APPLY_FAILURE_LIMIT: int(
    3,
    1,
    "failed applies of one run's tick in a row after which the run is quarantined (Failed, class Internal) instead of retried by every sweep",
  ),
  WATCHDOG_EVERY_SWEEPS: int(10, 1, 'every Nth sweep the stuck-run watchdog makes due the runs owed a tick their wake_at will not give'),
  WATCHDOG_GRACE_MS: int(5_000, 0, 'how long past due (a deadline, a backoff end, a wake) a run must be before the watchdog acts, ms'),
  SNAPSHOT_CACHE_RUNS: int(50_000, 0, 'most runs whose snapshot the shard owner keeps between ticks (0: read every tick)'),
  TENANT_HINT_RUNS: int(
    100_000,
    0,
    "most runs whose tenant the shard owner remembers to order its ticks fairly across tenants (TENANT_WEIGHTS); the oldest are forgotten first, and a run it forgot is ticked as of an unknown tenant (0: no fair order between tenants' runs)",
  ),
  LANE_WINDOW_TOOL: int(
    32,
    1,
    "dispatch window of the tool lane: ready tool work is handed to BullMQ only while fewer jobs than this wait on the lane; the rest stays Queued, held per tenant and released by weighted round robin",
  ),
  LANE_WINDOW_LLM: int(32, 1, 'dispatch window of the llm lane (see LANE_WINDOW_TOOL)'),
  TENANT_WEIGHTS: parsedListOption(parseTenantWeights, "tenants' shares of the dispatch window as tenant=weight pairs (a=3,b=1), weights 1–1000; an unlisted tenant weighs 1"),
  MODEL_PRICES: z
    .string()
    .default('{}')
    .superRefine((text, ctx) => {
      const r = modelPricesOfText(text);
      if (!r.ok) for (const message of r.errors) ctx.addIssue({ code: 'custom', message });
    })
    .describe(
      'model prices for run budgets (maxCostUsd) and run usage.costUsd, JSON {"<model>":{"inputPerMTok":0.15,"outputPerMTok":0.6}} in USD per million tokens; a model is priced by its exact name, else by the longest listed name it extends with "-"; an unlisted model costs 0 (its tokens show as usage.unpricedTokens)',
    ),
  RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_RETENTION_DAYS)
    .default(0)
    .describe(`days a tenant keeps its terminal runs (Completed/Failed/Cancelled, counted from finished_at) before the pruner deletes them with their events, node runs and messages; 0 keeps them forever`),
  TENANT_RETENTION_DAYS: parsedListOption(parseTenantRetention, 'per-tenant RETENTION_DAYS as tenant=days pairs (acme=7,beta=90; 0 keeps that tenant\'s runs forever); an unlisted tenant has RETENTION_DAYS'),
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500).describe('most runs the pruner deletes in one statement (its own short transaction)'),
  RETENTION_BATCH_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).default(100).describe('pause between two pruning batches, ms, leaving the database to the tick loops'),
  BULK_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100).describe('runs a bulk action job applies its verb to between two recorded checkpoints (outcomes, counts, cursor, lease renewal)'),
  BULK_LEASE_MS: z.coerce.number().int().min(500).max(3_600_000).default(10_000).describe('lease of a dispatcher on a bulk action job, renewed by every batch; an expired lease lets another dispatcher resume the job'),
  BULK_BATCH_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).default(0).describe('pause between two bulk action batches, ms, leaving the database to the tick loops'),
  BULK_ERROR_RATE_MIN_RUNS: z.coerce.number().int().min(1).max(1_000_000).default(20).describe("runs a bulk migrate must have processed since its last resume before its maxErrorRate can pause it (one early refusal is not a rate)"),
  BULK_POLL_MS: z.coerce.number().int().min(100).max(600_000).default(1000).describe('how often an idle dispatcher looks for an open bulk action job, ms'),
  APPROVAL_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{24,}={0,2}$/, 'must be a Standard Webhooks secret: whsec_ and at least 24 base64 characters')
    .optional()
    .describe('signing secret of approval notifications (a Pause approval policy\'s notify webhooks, Standard Webhooks); unset: none is sent (secret)'),
  ...signedLinkOptions,
  APPROVAL_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000).describe('how long one approval notification delivery may take, ms'),
  APPROVAL_WEBHOOK_TRIES: z.coerce.number().int().min(1).max(10).default(3).describe('deliveries tried per approval notification (backoff 0.5 s doubling) before it is given up and logged'),
  SCHEDULE_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(500).describe('how often an idle dispatcher looks for due schedule slots (and buffered slots whose schedule has no live run), ms'),
  SCHEDULE_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(20).describe('due schedules one firing pass locks and decides (a full batch is followed by another pass at once)'),
  SCHEDULE_MAX_SLOTS_PER_PASS: z.coerce.number().int().min(1).max(100_000).default(1_000).describe('slots of one schedule a firing pass decides (after a long outage the rest wait for the next pass)'),
  SCHEDULE_ON_TIME_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000).describe('a slot fired at most this late is on time and starts whatever its catch-up mode; a later one is catch-up'),
  RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(86_400_000)
    .default(300_000)
    .describe('time between two pruning passes, ms (one dispatcher prunes at a time; the others skip the pass)'),
};

export const dispatcherConfigSchema = defineConfig({
  ...connectionOptions,
  ...coreOptions,
  ...dispatchOptions,
  PENDING_RUN_TTL_MS: backlogOptions.PENDING_RUN_TTL_MS,
  // a schedule slot's run is a start like the API's: it counts against the same Pending bound
  MAX_PENDING_RUNS: backlogOptions.MAX_PENDING_RUNS,
  TENANT_MAX_PENDING_RUNS: backlogOptions.TENANT_MAX_PENDING_RUNS,
  ...encryptionOptions,
  ...resealOptions,
  ...logOptions,
  ...tracingOptions,
  ...dispatcherOwnOptions,
  ...opsOptions,
});

export type DispatcherConfig = z.output<typeof dispatcherConfigSchema>;

/** The options the planner reads. */
export function coreOptionsOf(c: DispatcherConfig): CoreOptions {
  return toCoreOptions(c);
}

/**
 * The plan's `slotRetryMs`: how long a Pending run without a tenant slot waits before it asks
 * again (nothing signals a freed slot): two sweeps, at least a second.
 */
export function slotRetryMsOf(c: DispatcherConfig): number {
  return Math.max(1000, 2 * c.DISPATCH_SWEEP_MS);
}

/** The dispatch window's target waiting depth of each lane. */
export function laneWindowsOf(c: DispatcherConfig): Record<Lane, number> {
  return { tool: c.LANE_WINDOW_TOOL, llm: c.LANE_WINDOW_LLM };
}

/** TENANT_WEIGHTS, already validated at boot. */
export function tenantWeightsOf(c: DispatcherConfig): Record<string, number> {
  return parseTenantWeights(c.TENANT_WEIGHTS);
}

/** MODEL_PRICES text → the price table, or why not (JSON syntax, then each entry). */
function modelPricesOfText(text: string): ReturnType<typeof parseModelPrices> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [`MODEL_PRICES is not JSON: ${(err as Error).message}`] };
  }
  return parseModelPrices(doc);
}

/** MODEL_PRICES, already validated at boot. */
export function modelPricesOf(c: DispatcherConfig): ModelPrices {
  const r = modelPricesOfText(c.MODEL_PRICES);
  return r.ok ? r.prices : {};
}
