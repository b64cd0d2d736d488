import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { TERMINAL_RUN_STATUSES_SQL } from '../store/status-sql';
import { tenantScoped } from './columns';

/**
 * One row per run (RunState of libs/graph/src/planner/types.ts, snake_case).
 * Every dispatcher write is guarded by `version` (compare-and-set, bumped per commit);
 * events are numbered from `last_seq`. `graph` is the pinned raw document, `plan_graph`
 * the pinned parsed `Graph` model the planner reads (never re-parsed by the dispatcher).
 */
export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey(),
    ...tenantScoped,
    /** no FK: definitions may be deleted only when no live run pins them (checked by the API) */
    definitionId: uuid('definition_id').notNull(),
    definitionVersion: integer('definition_version').notNull(),
    /**
     * the version alias the start went through (`current` for a start naming neither; null for an
     * explicit version): its Subworkflow and Map children go through the child definition's alias
     * of the same name when it has one
     */
    versionAlias: text('version_alias'),
    graph: jsonb('graph').notNull(),
    planGraph: jsonb('plan_graph').notNull(),
    graphHash: text('graph_hash').notNull(),
    status: text('status').notNull(),
    failureClass: text('failure_class').notNull().default('None'),
    reason: text('reason'),
    paused: boolean('paused').notNull().default(false),
    /** CAS guard */
    version: integer('version').notNull().default(0),
    /** seq of the last event written for this run */
    lastSeq: integer('last_seq').notNull().default(0),
    /** 0..SHARD_COUNT-1, `shardOf(id)` */
    shard: integer('shard').notNull(),
    /** due-work index: the run needs a tick at or after this time */
    wakeAt: timestamp('wake_at', { withTimezone: true }),
    requestId: text('request_id'),
    input: jsonb('input')
      .notNull()
      .default(sql`'null'::jsonb`),
    output: jsonb('output'),
    parentRunId: uuid('parent_run_id'),
    parentNodeKey: text('parent_node_key'),
    conversationId: text('conversation_id'),
    depth: integer('depth').notNull().default(0),
    totalAttempts: integer('total_attempts').notNull().default(0),
    /**
     * The saved agents its Agent nodes use, pinned when the run was created: node key →
     * `{ id, version }` (`config.agentDefinitionId`, and `agentVersion` or the agent's latest
     * version then). An update of the agent after the start does not reach this run.
     */
    agentPins: jsonb('agent_pins')
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** the budget given on start (`RunBudget`, POST /v1/runs `budget`); null: none (the graph's may still apply) */
    budget: jsonb('budget'),
    /** model usage rolled up by the planner (`RunUsage`: tokens, cost, child attempts); null: none yet */
    usage: jsonb('usage'),
    breakpoints: jsonb('breakpoints')
      .notNull()
      .default(sql`'[]'::jsonb`),
    stepAllowance: jsonb('step_allowance'),
    edgeOverrides: jsonb('edge_overrides')
      .notNull()
      .default(sql`'{}'::jsonb`),
    cancelReason: text('cancel_reason'),
    /** the run this one was forked from (`POST /v1/runs/{id}/fork`), else null */
    forkedFromRunId: uuid('forked_from_run_id'),
    /** the node of `forked_from_run_id` this run was forked from, else null */
    forkedFromNodeKey: text('forked_from_node_key'),
    /**
     * W3C `traceparent` of the request that created the run (null when tracing was off):
     * the dispatcher parents each node dispatch's span on it, so one trace follows a node
     * from the API through the dispatcher to its worker.
     */
    traceParent: text('trace_parent'),
    /**
     * Run metadata: string key/values given at start, NOT encrypted (they are
     * searchable: `metadata @> '{"k":"v"}'` on the GIN index below, ANDed with the tenant).
     */
    metadata: jsonb('metadata')
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** 1–5, higher first: orders the tenant's held work and Pending admissions; children inherit it */
    priority: integer('priority').notNull().default(3),
    /**
     * The run's value of its definition's concurrency key (`concurrency.key` over the input at
     * creation), null when the definition has none or the input gave none
     */
    concurrencyKey: text('concurrency_key'),
    /** the definition's `concurrency.limit` at creation (null without a key) */
    concurrencyLimit: integer('concurrency_limit'),
    /** true once the run took one of its key's places (flowline_claim_concurrency); held until the run ends */
    concurrencyClaimed: boolean('concurrency_claimed').notNull().default(false),
    /** the principal whose key created the run (an approval's `forbid: initiator`); null when unknown */
    createdBy: text('created_by'),
    /**
     * A delayed start's earliest start (`startAt` / `delay`, or a schedule's slot): the run is
     * created Scheduled with `wake_at` = this, and the dispatcher's due sweep releases it to
     * Pending then. Kept after the release (it says when the run was due). Null: started at once.
     */
    notBefore: timestamp('not_before', { withTimezone: true }),
    /** the schedule whose slot started this run (its request id is `schedule:<id>:<slot>`), else null */
    scheduleId: uuid('schedule_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('runs_tenant_request_uq')
      .on(t.tenantId, t.requestId)
      .where(sql`request_id is not null`),
    // a schedule's live runs (its overlap policy)
    index('runs_schedule_idx')
      .on(t.scheduleId, t.createdAt)
      .where(sql`schedule_id is not null`),
    index('runs_shard_wake_idx')
      .on(t.shard, t.wakeAt)
      .where(sql`wake_at is not null`),
    // run lists (run_list_indexes): one index per filter, each ending in the keyset
    // order (created_at desc, id desc) so a page — first or deep — reads limit + 1 entries
    index('runs_tenant_created_idx').on(t.tenantId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    // also the tenant's live-run count of the run slot (blocker facts, admission)
    index('runs_tenant_status_idx').on(t.tenantId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('runs_tenant_definition_idx').on(t.tenantId, t.definitionId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    // admission order of a tenant's Pending top-level runs: higher priority, then older
    index('runs_tenant_pending_priority_idx')
      .on(t.tenantId, t.priority.desc(), t.createdAt, t.id)
      .where(sql`status = 'Pending' and parent_run_id is null`),
    // a run's children, ended ones included (the live view's run tree): top-level runs, nearly all
    // of them, are left out, so their every update does not maintain an entry here
    index('runs_parent_idx')
      .on(t.parentRunId)
      .where(sql`parent_run_id is not null`),
    // a parent's live children (the snapshot load): a Map with thousands of ended children reads only the live ones
    index('runs_parent_live_idx')
      .on(t.parentRunId)
      .where(sql.raw(`parent_run_id is not null and status not in (${TERMINAL_RUN_STATUSES_SQL})`)),
    // a concurrency key's runs: its live places and its Pending runs
    index('runs_concurrency_key_idx')
      .on(t.tenantId, t.definitionId, t.concurrencyKey)
      .where(sql.raw(`concurrency_key is not null and status not in (${TERMINAL_RUN_STATUSES_SQL})`)),
    // retention (0009_retention.sql): a tenant's terminal runs oldest finished first
    index('runs_tenant_terminal_finished_idx')
      .on(t.tenantId, t.finishedAt)
      .where(sql.raw(`status in (${TERMINAL_RUN_STATUSES_SQL})`)),
    // run search by metadata containment (jsonb_path_ops: @> only, smaller than the default opclass)
    index('runs_metadata_idx').using('gin', t.metadata.op('jsonb_path_ops')),
    index('runs_tenant_conversation_idx')
      .on(t.tenantId, t.conversationId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`conversation_id is not null`),
  ],
);
