/**
 * The dispatcher's read: planner snapshots of many runs in ONE round trip.
 */
import type {
  ChildRunState,
  Graph,
  Intent,
  NodeRunState,
  RunSignal,
  RunSnapshot,
  RunState,
  RunWaitpoint,
  WaitEvent,
} from '@flowline/graph';
import { TERMINAL_RUN_STATUSES } from '@flowline/graph';
import { EncryptedValueError, isEnvelope, openEnvelopeText, openJson, reportUnreadableRun, type Sealed } from '../crypto';
import { definitionGraphAt } from './definitions';
import { decodeJson } from '../json-codec';
import type { Queryable } from './transaction';
import { getRunState, loadStateLogs } from './run-state';

/** A snapshot as stored: with the run's current `wake_at` (epoch ms), so an unchanged wake costs no write. */
export interface LoadedSnapshot extends RunSnapshot {
  wakeAt: number | null;
  shard: number;
  /** the W3C `traceparent` stored at creation (null: the run was not traced) */
  traceParent: string | null;
  /** the run's concurrency key value (null: none) and whether it holds one of the key's places */
  concurrencyKey?: string | null;
  concurrencyClaimed?: boolean;
}

/** Options of {@link loadSnapshots}. */
export interface LoadSnapshotsOptions {
  /** MAX_CONCURRENT_RUNS: live top-level runs per tenant */
  maxConcurrentRuns: number;
  /**
   * Called for a run left out because a stored value of it cannot be decrypted (tag
   * mismatch, or no ENCRYPTION_KEY for an encrypted value); the other runs load. Default:
   * the process-wide listener of `onUnreadableRun` (crypto.ts).
   */
  onUnreadable?: (runId: string, error: EncryptedValueError) => void;
}

/** Run statuses that hold one of the tenant's MAX_CONCURRENT_RUNS slots (parked runs hold none). */
export const SLOT_HOLDING_RUN_STATUSES = ['Running', 'Cancelling'] as const;

const TERMINAL_STATUSES = [...TERMINAL_RUN_STATUSES];

const EMPTY_GRAPH: Graph = {
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes: [],
  edges: [],
};

/*
 * Inputs: $1 run ids, $2 slot-holding statuses, $3 MAX_CONCURRENT_RUNS, $4 terminal run statuses.
 * Result: one row per existing run — the run as RunState JSON (with its budget and usage), its pinned plan_graph, wake_at,
 * shard, its node rows, unapplied intents (creation order), its child
 * runs (live ones and those a node row points at), and, for a tenant with a Pending top-level run
 * among them, its live top-level run count. A Pending top-level run's place in its tenant's
 * admission order (`ahead`) is counted only when the tenant's Pending runs outnumber its free
 * slots: otherwise every one of them has a slot, and a burst of runs is not counted against
 * itself once per run.
 * Times are epoch ms (flowline_ms).
 * The query is the function `flowline_load_snapshots` (migration 0016), which runs it on a
 * generic plan cached per session: as a prepared statement Postgres planned it afresh on every
 * call, and planning cost 10× running it.
 */
const LOAD_SQL =
  'SELECT * FROM flowline_load_snapshots($1::uuid[], $2::text[], $3::int, $4::text[]) WITH ORDINALITY AS s ORDER BY s.ordinality';

interface LoadRow {
  run: RunState;
  graph: Graph | null;
  def_id: string;
  def_version: number;
  wake_at: number | null;
  shard: number;
  trace_parent: string | null;
  concurrency_key: string | null;
  concurrency_claimed: boolean;
  /** live top-level runs of the tenant; null when no Pending top-level run of the tenant was loaded (nobody asks for a slot) */
  tenant_live: number | null;
  /** Pending top-level runs of the tenant before this one in admission order, counted up to the free slots */
  ahead: number;
  nodes: NodeRunState[];
  intents: Array<{ id: string; kind: string; nodeKey: string | null; payload: Record<string, unknown> }>;
  children: ChildRunState[];
  /** the run's signals no Wait consumed yet, oldest first */
  signals: RunSignal[];
  /** the run's waitpoints no Wait settled yet */
  waitpoints: RunWaitpoint[];
  /** events its event waitpoints may take, oldest first */
  wait_events: WaitEvent[];
}

/**
 * Loads planner snapshots of `runIds` (missing ids are left out) in one round trip, oldest run
 * first. `results` and `started` are empty: outcomes and starts reach the dispatcher through
 * Redis (job return values and reports), which adds them to the snapshot before planning. Nodes follow the graph's order.
 * `runSlotAvailable`: a run that is not Pending, or is a child run (its parent's slot covers it),
 * always has one; a Pending top-level run has one while fewer Pending top-level runs of its
 * tenant come before it in admission order (`compareAdmission`: higher priority first, then
 * older, then id) than the tenant has free slots.
 */
export async function loadSnapshots(
  db: Queryable,
  runIds: string[],
  opts: LoadSnapshotsOptions,
): Promise<LoadedSnapshot[]> {
  if (runIds.length === 0) return [];
  const res = await db.query<LoadRow>({ name: 'flowline_load_snapshots', text: LOAD_SQL, values: [runIds, SLOT_HOLDING_RUN_STATUSES, opts.maxConcurrentRuns, TERMINAL_STATUSES] });
  const free = new Map<string, number>();
  const aheadOf = new Map<string, number>();
  const out: LoadedSnapshot[] = [];
  for (const row of res.rows) {
    try {
      openRow(row);
    } catch (err) {
      if (!(err instanceof EncryptedValueError)) throw err;
      (opts.onUnreadable ?? reportUnreadableRun)(row.run.id, err);
      continue;
    }
    const graph = row.graph ?? EMPTY_GRAPH;
    const order = new Map(graph.nodes.map((n, i) => [n.key, i]));
    const nodes = [...row.nodes].sort(
      (a, b) =>
        (order.get(a.nodeKey) ?? Infinity) - (order.get(b.nodeKey) ?? Infinity) || cmp(a.nodeKey, b.nodeKey),
    );
    const tenant = row.run.tenantId;
    if (!free.has(tenant) && row.tenant_live !== null) free.set(tenant, opts.maxConcurrentRuns - Number(row.tenant_live));
    aheadOf.set(row.run.id, Number(row.ahead));
    out.push({
      run: row.run,
      graph,
      nodes,
      results: [],
      started: [],
      intents: row.intents.map(toIntent),
      children: row.children,
      ...(row.signals.length > 0 ? { signals: row.signals } : {}),
      ...(row.waitpoints.length > 0 ? { waitpoints: row.waitpoints } : {}),
      ...(row.wait_events.length > 0 ? { waitEvents: row.wait_events } : {}),
      runSlotAvailable: true,
      wakeAt: row.wake_at,
      shard: row.shard,
      traceParent: row.trace_parent,
      concurrencyKey: row.concurrency_key,
      concurrencyClaimed: row.concurrency_claimed,
      // a keyed run starts only once it holds a place of its key (claimConcurrency)
      ...(row.concurrency_key !== null && !row.concurrency_claimed && awaitsAdmission(row.run.status) && row.run.parentRunId === null
        ? { concurrencyKeyAvailable: false }
        : {}),
    });
  }
  // run state: read only for runs whose graph keeps it, so a graph without state costs no read
  const stateful = out.filter((s) => s.graph.state !== undefined).map((s) => s.run.id);
  if (stateful.length > 0) {
    const logs = await loadStateLogs(db, stateful);
    for (const s of out) if (s.graph.state !== undefined) s.stateLog = logs.get(s.run.id) ?? [];
  }
  await loadChildStates(db, out);
  // Pending top-level runs take their tenant's free slots in admission order: a run
  // gets one only while fewer Pending runs of its tenant come before it (higher priority, or the
  // same and older; counted over every shard) than slots are free.
  for (const s of out) {
    if (!awaitsAdmission(s.run.status) || s.run.parentRunId !== null) continue;
    s.runSlotAvailable = (aheadOf.get(s.run.id) ?? 0) < free.get(s.run.tenantId)!;
  }
  return out;
}

/** A run that takes a run slot when admitted: Pending, or Scheduled (its release tick may admit it at once). */
function awaitsAdmission(status: string): boolean {
  return status === 'Pending' || status === 'Scheduled';
}

/**
 * A Subworkflow with `stateOut` writes its child's final state when the child completes: that
 * state is read (folded from the child's log) for a Completed child whose node still runs it —
 * once, on the tick that settles the node; never for any other child.
 */
async function loadChildStates(db: Queryable, snapshots: LoadedSnapshot[]): Promise<void> {
  for (const s of snapshots) {
    for (const c of s.children) {
      if (c.status !== 'Completed') continue;
      const row = s.nodes.find((n) => n.nodeKey === c.nodeKey);
      if (row?.status !== 'Running' || row.childRunId !== c.childRunId) continue;
      const node = s.graph.nodes.find((n) => n.key === c.nodeKey);
      if (node?.kind !== 'Subworkflow' || node.config['stateOut'] === undefined) continue;
      c.state = (await getRunState(db, s.run.tenantId, c.childRunId))?.state ?? {};
    }
  }
}

/**
 * Concurrency keys: each Pending top-level keyed run of `runIds` without a place
 * takes one of its key's places when there is one (`flowline_claim_concurrency`, migration
 * 0011: a try-lock per key, so dispatchers never exceed a limit); returns the ids that did.
 */
export async function claimConcurrency(db: Queryable, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const res = await db.query<{ claimed: string[] }>({
    name: 'flowline_claim_concurrency',
    text: 'SELECT flowline_claim_concurrency($1::uuid[])::text[] AS claimed',
    values: [runIds],
  });
  return new Set(res.rows[0]?.claimed ?? []);
}

/** Node-row documents as NodeRunState / NodePatch member → node_runs column (the AAD's column). */
export const NODE_DOC_COLUMNS = [
  ['input', 'input'],
  ['inputOverride', 'input_override'],
  ['output', 'output'],
  ['decision', 'decision'],
  ['approvals', 'approvals'],
  ['loop', 'loop_state'],
  ['map', 'map_state'],
] as const;

/** Where a node row's document lives. */
export function nodeDocAt(runId: string, nodeKey: string, column: string): Sealed {
  return { table: 'node_runs', column, row: `${runId}/${nodeKey}` };
}

/** Where a steering entry's message lives (each entry's `message` is sealed on its own). */
export function steerMessageAt(runId: string, nodeKey: string, operationId: string): Sealed {
  return { table: 'node_runs', column: 'steering', row: `${runId}/${nodeKey}/${operationId}` };
}

/** Where a waitpoint's payload lives (a completed token's body, or the event an event arm took). */
export function waitpointPayloadAt(id: string): Sealed {
  return { table: 'waitpoints', column: 'payload', row: id };
}

/** Where an inbound event's data lives (its id is unique per tenant). */
export function inboundEventDataAt(tenantId: string, id: string): Sealed {
  return { table: 'inbound_events', column: 'data', row: `${tenantId}/${id}` };
}

/** Where a runs document lives. */
export function runDocAt(runId: string, column: 'input' | 'output'): Sealed {
  return { table: 'runs', column, row: runId };
}

/**
 * Opened plan graphs by ciphertext: a definition version's plan graph never changes, and
 * every load of its runs reads it, so it is decrypted and parsed once and shared, deep-frozen
 * (the planner only reads it; a write would throw instead of leaking into other runs).
 */
const planCache = new Map<string, Graph>();
const PLAN_CACHE_MAX = 1000;

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v as object)) deepFreeze(child);
  }
  return v;
}

/** Opens every sealed value of a loaded row in place (plaintext values pass through). */
function openRow(row: LoadRow): void {
  const runId = row.run.id;
  if (isEnvelope(row.graph)) {
    const where = definitionGraphAt(row.def_id, row.def_version, 'plan_graph');
    const cacheKey = `${where.row}|${(row.graph as unknown as { tag: string }).tag}`;
    let graph = planCache.get(cacheKey);
    if (graph === undefined) {
      graph = deepFreeze(decodeJson(openEnvelopeText(row.graph, where)!) as Graph);
      if (planCache.size >= PLAN_CACHE_MAX) planCache.clear();
      planCache.set(cacheKey, graph);
    }
    row.graph = graph;
  }
  row.run.input = openJson(row.run.input, runDocAt(runId, 'input'));
  for (const n of row.nodes) {
    const doc = n as unknown as Record<string, unknown>;
    for (const [member, column] of NODE_DOC_COLUMNS) {
      if (isEnvelope(doc[member])) doc[member] = openJson(doc[member], nodeDocAt(runId, n.nodeKey, column));
    }
    for (const s of n.steering ?? []) {
      if (isEnvelope(s.message)) s.message = openJson<string>(s.message, steerMessageAt(runId, n.nodeKey, s.operationId));
    }
  }
  for (const i of row.intents) {
    if (isEnvelope(i.payload)) i.payload = openJson(i.payload, { table: 'intents', column: 'payload', row: i.id });
  }
  for (const sg of row.signals) {
    if (isEnvelope(sg.payload)) sg.payload = openJson(sg.payload, { table: 'run_signals', column: 'payload', row: sg.id });
  }
  for (const w of row.waitpoints) {
    if (isEnvelope(w.payload)) w.payload = openJson(w.payload, waitpointPayloadAt(w.id));
  }
  for (const e of row.wait_events) {
    if (isEnvelope(e.data)) e.data = openJson(e.data, inboundEventDataAt(row.run.tenantId, e.id));
  }
  for (const c of row.children) {
    if (isEnvelope(c.output)) c.output = openJson(c.output, runDocAt(c.childRunId, 'output'));
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** intents row → Intent: `payload` carries the kind's own members (reason, output, operationId). */
function toIntent(row: LoadRow['intents'][number]): Intent {
  const base = { ...row.payload, id: row.id, kind: row.kind };
  if (row.kind === 'cancel')
    return { id: row.id, kind: 'cancel', reason: (row.payload.reason as string) ?? null };
  return { ...base, nodeKey: row.nodeKey } as Intent;
}
