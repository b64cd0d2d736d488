import { integer, jsonb, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { tenantScoped } from './columns';

/**
 * A run's state log: one row per `state.updated` event (`seq` is that event's seq), holding
 * the writing node and the values it wrote before reduction; seq 0 is a run's seed (a fork's
 * kept writes). The state is the fold of these rows (libs/graph `state/fold.ts`), so a tick
 * stores only its own writes, never a copy of the whole state, and the state as of any event
 * is the fold of the rows up to it. `entries` is sealed under ENCRYPTION_KEY
 * (`run_state_writes.entries.<runId>/<seq>`).
 */
export const runStateWrites = pgTable(
  'run_state_writes',
  {
    runId: uuid('run_id').notNull(),
    seq: integer('seq').notNull(),
    ...tenantScoped,
    /** `[{ nodeKey, writes }]`: one entry for a node's write, several for a seed */
    entries: jsonb('entries').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);
