import { check, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { tenantScoped } from './columns';

/**
 * An Agent node's checkpointed transcript: each model answer, tool result, approval (asked
 * and decided) and steering message, written by the LLM worker as it goes, so a new
 * invocation of the node (after a kill, a Redis flush or a park on a tool approval) resumes
 * from the last step instead of paying for the loop again. `step` numbers the node's steps
 * over all its lives; `generation` is the life (the first attempt of it: an operator's retry
 * starts a new one, whose steps continue the numbering). `payload` is sealed like the other
 * documents (AAD `agent_steps.payload.<run>/<node>/<step>`). Deleted with its run.
 */
export const agentSteps = pgTable(
  'agent_steps',
  {
    runId: uuid('run_id').notNull(),
    nodeKey: text('node_key').notNull(),
    step: integer('step').notNull(),
    ...tenantScoped,
    generation: integer('generation').notNull(),
    /** the attempt that wrote it */
    attempt: integer('attempt').notNull(),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    /** the payload's UTF-8 size as written (MAX_AGENT_TRANSCRIPT_BYTES sums it) */
    bytes: integer('bytes').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.nodeKey, t.step] }),
    check('agent_steps_kind_check', sql`${t.kind} in ('model', 'tool', 'approval', 'steer')`),
  ],
);
