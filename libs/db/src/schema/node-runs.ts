import { NODE_CAUSES } from '@flowline/graph';
import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/** Why a row reads its status when status and class do not say it (libs/graph model.ts NODE_CAUSES). */
export const nodeCause = pgEnum('node_cause', NODE_CAUSES);

/**
 * One row per (run, graph node): NodeRunState of libs/graph/src/planner/types.ts.
 * Writes are guarded by (status, attempt). `loop_state` holds `NodeRunState.loop`.
 */
export const nodeRuns = pgTable(
  'node_runs',
  {
    runId: uuid('run_id').notNull(),
    nodeKey: text('node_key').notNull(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    attempt: integer('attempt').notNull().default(0),
    attemptLimit: integer('attempt_limit').notNull(),
    invocationId: uuid('invocation_id'),
    failureClass: text('failure_class').notNull().default('None'),
    /** the planner writes it with the status it explains; `reason` stays human text, never matched */
    cause: nodeCause('cause').notNull().default('None'),
    reason: text('reason'),
    input: jsonb('input'),
    inputOverride: jsonb('input_override'),
    output: jsonb('output'),
    notBefore: timestamp('not_before', { withTimezone: true }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true }),
    queuedAt: timestamp('queued_at', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    steering: jsonb('steering')
      .notNull()
      .default(sql`'[]'::jsonb`),
    pendingDecisionKind: text('pending_decision_kind'),
    decision: jsonb('decision'),
    /**
     * A Pause with an approval policy: every decision recorded on this attempt, oldest first
     * (`ApprovalVote[]`: principal, what qualified it, decision, path, comment, time; sealed like
     * `decision`). Appended by the API under the row's lock; reset when the gate opens again.
     */
    approvals: jsonb('approvals'),
    held: boolean('held').notNull().default(false),
    childRunId: uuid('child_run_id'),
    loopState: jsonb('loop_state'),
    /** `NodeRunState.map`: a running Map node's progress (sealed like the other documents) */
    mapState: jsonb('map_state'),
    /**
     * The child runs a running Map node keeps working (the ids of `map_state.live`), kept
     * readable so the snapshot load can fetch exactly those children, ended ones included,
     * whatever the number of items.
     */
    liveChildren: uuid('live_children').array(),
    /** set at run creation: the node posts its answer to the run's conversation (publishToChat) */
    publishes: boolean('publishes').notNull().default(false),
    /** the attempt whose output was published (or found to have nothing to publish), else null */
    publishedAttempt: integer('published_attempt'),
    /** set at fork: the source run this row was copied from (reused, never run in this run), else null */
    reusedFromRunId: uuid('reused_from_run_id'),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.nodeKey] }),
    index('node_runs_invocation_idx').on(t.invocationId),
    // reconciliation finds in-flight work without scanning every node row
    index('node_runs_inflight_idx')
      .on(t.runId)
      .where(sql`status in ('Queued', 'Running')`),
    // the publish heal finds succeeded publishing nodes whose publish was lost; normally empty
    index('node_runs_unpublished_idx')
      .on(t.runId)
      .where(sql`publishes and status = 'Succeeded' and published_attempt is distinct from attempt`),
  ],
);
