/**
 * The dispatcher's write: a batch of plans committed in ONE transaction and ONE round trip
 * through the server-side function `flowline_apply` (migration 0002). Each run is guarded on
 * its own (advisory try-lock, version, node status+attempt); a run whose guard fails is
 * reported conflicted and none of its writes land, while the others commit.
 */
import { holdsVerbatimTrigger, isEmptyPlan, type PlanResult, type RunSnapshot } from '@flowline/graph';
import pg, { type Pool, type QueryResult } from 'pg';
import { encryptionEnabled, sealJson, type Sealed } from '../crypto';
import { encodeJson } from '../json-codec';
import { NODE_DOC_COLUMNS, nodeDocAt, runDocAt, steerMessageAt, waitpointPayloadAt } from './run-snapshots';
import { TERMINAL_RUN_STATUSES_SQL } from './status-sql';
import { stateEntriesAt } from './run-state';
import type { Queryable } from './transaction';
import { chooseChildVersions, type ChildVersionChoice } from './child-versions';

/** One run's plan with the snapshot it was planned from. */
export interface ApplyItem {
  /** `wakeAt` (as loaded by loadSnapshots) lets an unchanged wake cost nothing */
  snapshot: RunSnapshot & { wakeAt?: number | null };
  plan: PlanResult;
}

/** Options of {@link applyPlans}. */
export interface ApplyOptions {
  /** SHARD_COUNT: child runs get `flowline_shard_of(id, shardCount)` */
  shardCount: number;
}

/**
 * Outcome per run id. After `applied`, a run that had changes is at version
 * `expectVersion + 1` and lastSeq `lastSeq + plan.events.length` (events numbered
 * lastSeq+1…); a wake-only apply leaves both unchanged.
 */
export interface ApplyOutcome {
  applied: string[];
  conflicted: string[];
  /** plans with nothing to write (no statement sent) */
  skipped: string[];
  /** runs whose item raised an error on its own (the rest of the batch was applied) */
  failed: Array<{ runId: string; error: unknown }>;
}

const RUN_TIME_FIELDS = ['startedAt', 'finishedAt'] as const;
const NODE_TIME_FIELDS = ['notBefore', 'deadlineAt', 'queuedAt', 'startedAt', 'finishedAt'] as const;

function iso(ms: number | null | undefined): string | null | undefined {
  return ms === null || ms === undefined ? ms : new Date(ms).toISOString();
}

/** Epoch-ms members → ISO strings (exact in SQL `::timestamptz`); undefined members dropped by JSON. */
function withIsoTimes<T extends object>(set: T, fields: readonly string[]): Record<string, unknown> {
  const out = { ...set } as Record<string, unknown>;
  for (const f of fields) if (f in out) out[f] = iso(out[f] as number | null | undefined);
  return out;
}

/** Events whose detail carries a document (a steering message, the arguments of a tool call asking approval). */
export const SEALED_EVENT_KINDS: ReadonlySet<string> = new Set(['node.steered', 'node.steer-ignored', 'gate.requested']);

/** Where an event's detail lives. */
export function eventDetailAt(runId: string, seq: number): Sealed {
  return { table: 'events', column: 'detail', row: `${runId}/${seq}` };
}

/** A node patch's set with its documents sealed for (run, node); unchanged without a key. */
function sealNodeSet(runId: string, nodeKey: string, set: Record<string, unknown>): Record<string, unknown> {
  for (const [member, column] of NODE_DOC_COLUMNS) {
    const v = set[member];
    if (v !== undefined && v !== null) set[member] = sealJson(v, nodeDocAt(runId, nodeKey, column));
  }
  const steering = set.steering as Array<{ operationId: string; message: unknown }> | undefined | null;
  if (steering) {
    set.steering = steering.map((s) => ({ ...s, message: sealJson(s.message, steerMessageAt(runId, nodeKey, s.operationId)) }));
  }
  return set;
}

/**
 * Seals the documents of an apply item (ENCRYPTION_KEY set): node documents and steering
 * messages, the run output, run-state writes, child run inputs (bound to the child's id) and the detail of
 * steering events — numbered `lastSeq + i` as flowline_apply numbers them, which holds
 * because the item applies only at the snapshot's version and every writer of `last_seq`
 * bumps `version`.
 */
function sealItem(item: Record<string, unknown>, runId: string, lastSeq: number): void {
  const run = item.run as Record<string, unknown>;
  if (run.output !== undefined && run.output !== null) run.output = sealJson(run.output, runDocAt(runId, 'output'));
  for (const n of item.nodes as Array<{ nodeKey: string; set: Record<string, unknown> }>) sealNodeSet(runId, n.nodeKey, n.set);
  // an event arm's payload is the event's data: sealed under the waitpoint's own row
  if (item.resolvedWaitpoints) {
    item.resolvedWaitpoints = (item.resolvedWaitpoints as Array<{ id: string; payload?: unknown }>).map((w) =>
      w.payload === undefined ? w : { ...w, payload: sealJson(w.payload, waitpointPayloadAt(w.id)) },
    );
  }
  item.children = (item.children as Array<{ childRunId: string; input: unknown; stateSeed?: unknown }>).map((c) => ({
    ...c,
    input: sealJson(c.input, runDocAt(c.childRunId, 'input')),
    ...(c.stateSeed !== undefined ? { stateSeed: sealJson(c.stateSeed, stateEntriesAt(c.childRunId, 0)) } : {}),
  }));
  if (item.stateWrites) {
    item.stateWrites = (item.stateWrites as Array<{ seq: number; entries: unknown }>).map((w) => ({ ...w, entries: sealJson(w.entries, stateEntriesAt(runId, w.seq)) }));
  }
  item.events = (item.events as Array<{ kind: string; detail: unknown }>).map((e, i) =>
    SEALED_EVENT_KINDS.has(e.kind) ? { ...e, detail: sealJson(e.detail, eventDetailAt(runId, lastSeq + i + 1)) } : e,
  );
}

/** A Map's progress also names the children it keeps working, as ids the load reads (`live_children`). */
function withLiveChildren(set: Record<string, unknown>): Record<string, unknown> {
  if (!('map' in set)) return set;
  const map = set.map as { live: Array<{ childRunId: string }> } | null;
  return { ...set, liveChildren: map ? map.live.map((l) => l.childRunId) : null };
}

/** A child's chosen version as `flowline_create_child` reads it: `version` and `alias`, or `refused`. */
function childVersionMembers(v: ChildVersionChoice | undefined): Record<string, unknown> {
  if (v === undefined) return {};
  if ('refused' in v) return { refused: v.refused };
  return { version: v.version, ...(v.alias === null ? {} : { alias: v.alias }) };
}

/** The `flowline_apply_run` item of one plan, or null when it has nothing to write. */
export function toApplyItem({ snapshot, plan }: ApplyItem, childVersions: ReadonlyMap<string, ChildVersionChoice> = new Map()): Record<string, unknown> | null {
  const runId = snapshot.run.id;
  const expectVersion = plan.run?.expectVersion ?? snapshot.run.version;
  if (isEmptyPlan(plan)) {
    if (snapshot.wakeAt === undefined || snapshot.wakeAt === plan.wakeAt) return null;
    return { runId, expectVersion, wakeOnly: true, wakeAt: iso(plan.wakeAt) };
  }
  const item = {
    runId,
    expectVersion,
    run: plan.run ? withIsoTimes(plan.run.set, RUN_TIME_FIELDS) : {},
    nodes: plan.nodes.map((p) => ({
      nodeKey: p.nodeKey,
      expectStatus: p.expect.status,
      expectAttempt: p.expect.attempt,
      set: withLiveChildren(withIsoTimes(p.set, NODE_TIME_FIELDS)),
    })),
    events: plan.events,
    intentIds: plan.consumedIntentIds,
    // a Subworkflow's stateIn: the child's state seed, one base entry of its log at seq 0
    // and the version chosen for it (chooseChildVersions); none chosen: the SQL takes the latest
    children: plan.startChildren.map(({ state, pin: _pin, ...c }) => ({
      ...c,
      ...(state ? { stateSeed: [{ nodeKey: null, writes: state }] } : {}),
      ...childVersionMembers(childVersions.get(c.childRunId)),
    })),
    cancelChildren: plan.cancelChildren,
    wakeAt: iso(plan.wakeAt),
    // run state: each write is one log row under its state.updated event's seq
    ...(plan.stateWrites ? { stateWrites: plan.stateWrites.map((w) => ({ seq: w.seq, entries: [{ nodeKey: w.nodeKey, writes: w.writes }] })) } : {}),
    // signals the plan's Wait nodes consumed, marked in the same commit
    ...(plan.consumedSignals ? { consumedSignals: plan.consumedSignals } : {}),
    // waitpoints minted by parked Waits and settled by ended ones, in the same commit
    ...(plan.createdWaitpoints ? { createdWaitpoints: plan.createdWaitpoints.map((w) => ({ ...w, createdAt: iso(w.createdAt), expiresAt: iso(w.expiresAt) })) } : {}),
    ...(plan.resolvedWaitpoints ? { resolvedWaitpoints: plan.resolvedWaitpoints } : {}),
  };
  // without a key the documents go as they are, unless jsonb would rewrite a number of one
  // (spell `1e131071` out in full): then those are stored verbatim (see sealJson)
  if (encryptionEnabled() || holdsVerbatimTrigger(item)) sealItem(item, runId, snapshot.run.lastSeq);
  return item;
}

/*
 * Input: $1 = { shardCount, items: [flowline_apply_run item] }.
 * Guard: per run, inside flowline_apply_run (see migration 0002).
 * Result: { applied: [runId], conflicted: [runId] }.
 */
const APPLY_SQL = 'SELECT flowline_apply($1::jsonb) AS outcome';

/**
 * Commits many runs' plans in one transaction (one statement). Plans with nothing to write
 * are skipped without a statement; an empty plan whose wake moved is a wake-only write.
 * Node patches of one plan must name distinct nodes. Invocation and child-run ids must be uuids.
 * If the batch raises (an item the store refuses), each item is retried alone so one bad run
 * cannot stall the others; those that raise again are reported in `failed`, as is an item
 * that cannot even be built (e.g. a time outside the Date range).
 */
export async function applyPlans(
  db: Queryable,
  items: ApplyItem[],
  opts: ApplyOptions,
): Promise<ApplyOutcome> {
  const out: ApplyOutcome = { applied: [], conflicted: [], skipped: [], failed: [] };
  const batch: Array<Record<string, unknown>> = [];
  const childVersions = await chooseChildVersions(db, items);
  for (const item of items) {
    let a: Record<string, unknown> | null;
    try {
      a = toApplyItem(item, childVersions);
    } catch (error) {
      out.failed.push({ runId: item.snapshot.run.id, error });
      continue;
    }
    if (a) batch.push(a);
    else out.skipped.push(item.snapshot.run.id);
  }
  if (batch.length === 0) return out;
  // One connection for the batch and its retries: a retry then starts only after the failed
  // statement's rollback released its locks (another backend could still see them held).
  const pooled = isPool(db) ? await db.connect() : null;
  const conn: Queryable = pooled ?? db;
  try {
    try {
      collect(out, await runBatch(conn, batch, opts));
    } catch (err) {
      if (batch.length === 1) {
        out.failed.push({ runId: batch[0]!.runId as string, error: err });
        return out;
      }
      for (const one of batch) {
        try {
          collect(out, await runBatch(conn, [one], opts));
        } catch (error) {
          out.failed.push({ runId: one.runId as string, error });
        }
      }
    }
  } finally {
    pooled?.release();
  }
  return out;
}

function isPool(db: Queryable): db is Pool {
  return 'totalCount' in db && typeof (db as Pool).connect === 'function';
}

function collect(out: ApplyOutcome, r: { applied: string[]; conflicted: string[] }): void {
  out.applied.push(...r.applied);
  out.conflicted.push(...r.conflicted);
}

async function runBatch(
  db: Queryable,
  items: Array<Record<string, unknown>>,
  opts: ApplyOptions,
): Promise<{ applied: string[]; conflicted: string[] }> {
  // Named: each connection parses and plans it once; a hop then costs one bind + execute.
  const res = await queryNamed<{ outcome: { applied: string[]; conflicted: string[] } }>(db, 'flowline_apply', APPLY_SQL, [
    encodeJson({ shardCount: opts.shardCount, items }),
  ]);
  return res.rows[0]!.outcome;
}

/**
 * A named (prepared once per connection) statement with its values, sent on a client as a
 * `pg.Query` made from the text: a query given as a config object is copied property by
 * property (descriptors and all) on every call before pg reads it, which the dispatcher's
 * apply, one statement per tick, paid on every hop. Anything but a client (a pool hands the
 * query to a client of its own and must see it end) takes the config form.
 */
function queryNamed<R extends pg.QueryResultRow>(db: Queryable, name: string, text: string, values: unknown[]): Promise<QueryResult<R>> {
  if (!(db instanceof pg.Client)) return db.query<R>({ name, text, values });
  return new Promise((resolve, reject) => {
    const query = new pg.Query<R>(text, values, (err, res) => (err ? reject(err) : resolve(res)));
    // the statement's name, which @types/pg does not declare on a Query (pg reads it at submit)
    Object.assign(query, { name });
    db.query(query);
  });
}

/*
 * Input: $1 run id, $2 reason. Guard: the run is not terminal.
 * Effect: Failed, class Internal, the reason, finished_at, version + 1, wake_at NULL (never
 * ticked again), event run.failed {class, reason} at last_seq + 1, and every unapplied intent
 * of the run marked applied. Node rows are left as they are.
 * Result: one row when the run was ended.
 */
const FORCE_QUARANTINE_SQL = `
WITH r AS (
  UPDATE runs SET status = 'Failed', failure_class = 'Internal', reason = $2, finished_at = now(),
                  version = version + 1, last_seq = last_seq + 1, wake_at = NULL
  WHERE id = $1 AND status NOT IN (${TERMINAL_RUN_STATUSES_SQL})
  RETURNING id, last_seq),
e AS (
  INSERT INTO events (run_id, seq, kind, node_key, at, detail)
  SELECT id, last_seq, 'run.failed', NULL, now(), jsonb_build_object('class', 'Internal', 'reason', $2::text) FROM r),
i AS (UPDATE intents SET applied_at = now() WHERE run_id IN (SELECT id FROM r) AND applied_at IS NULL)
SELECT id FROM r`;

/**
 * The last resort of a quarantine, when the store refused even the run's quarantine plan:
 * ends the run Failed `Internal` with `reason` by one statement that writes no node row and
 * no document (see FORCE_QUARANTINE_SQL). True when it ended the run, false when the run
 * was already terminal (or is gone).
 */
export async function forceQuarantine(db: Queryable, runId: string, reason: string): Promise<boolean> {
  const res = await db.query(FORCE_QUARANTINE_SQL, [runId, reason]);
  return (res.rowCount ?? 0) > 0;
}
