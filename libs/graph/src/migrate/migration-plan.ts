/**
 * Migration of a live run to another version of its definition: the pure decision of whether
 * the run can move from its pinned graph to the new one, why not, and how each node row maps.
 * The store loads the run, this decides, the store writes the mapped rows (see `applyMigration`).
 *
 * The rules, each failing with a keyed reason (code, node key, message):
 * - every node row that has started (settled, live, or Pending after a failed attempt) maps to a
 *   node of the new graph — the same key, or `nodeMap[key]` — of the same kind. A row that never
 *   started (Pending at attempt 0) whose node is gone is dropped: nothing of it happened.
 * - a live row keeps its work valid: a Pause or ChatInput keeps waiting (a recorded decision must
 *   still be allowed), other live rows keep their invocation, child runs or wait when the node's
 *   work (config, schemas, state writes) is unchanged; a Queued/Running lane node whose work
 *   changed is re-queued (its invocation is dropped, the same attempt runs again on the new
 *   config); any other changed live node (a child run, a wait, a parked Agent) cannot move.
 * - replaying the run's committed outcomes on the new graph reproduces its history: every
 *   mapped row that has started is admitted (or skipped) by the planner's own admission rule on
 *   the new graph as it was on the old one, and every settled source fires the same edges (by
 *   mapped target). A node added upstream of work already done fails this check.
 * - the run's state validates against the new graph's state schema.
 *
 * Verdict: `compatible` when no reason stands; `needsMapping` when every reason could be
 * answered by a `nodeMap` (a node gone or of another kind while the new graph has an unmapped
 * node of its kind, or a bad `nodeMap` entry) — the replay is judged only once the mapping is
 * complete; `incompatible` otherwise.
 */
import { canonicalJson } from '../schema/canonical-json';
import { validateJson } from '../schema';
import { admission, type Admission } from '../planner/admission';
import { edgeVerdict, type RoutingView } from '../planner/edge-verdict';
import { indexGraph } from '../planner/graph-index';
import { TERMINAL_RUN_STATUSES, type Graph, type GraphNode, type JsonObject, type NodeKind, type RunStatus } from '../model';
import type { NodeRunState } from '../planner/types';

export const MIGRATION_REASON_CODES = [
  'MapUnknownSource',
  'MapUnknownTarget',
  'MapTargetTaken',
  'NodeMissing',
  'KindChanged',
  'LiveWorkChanged',
  'DecisionNotAllowed',
  'ReplayDiverges',
  'RoutingChanged',
  'StateInvalid',
  'RunEnded',
] as const;
export type MigrationReasonCode = (typeof MIGRATION_REASON_CODES)[number];

export interface MigrationReason {
  code: MigrationReasonCode;
  /** the node (of the run's pinned graph, or of the new graph for a map target) the reason is about; null: the run */
  nodeKey: string | null;
  message: string;
}

/**
 * What happens to one row: `carry` (copied as it is, under the new key), `keep` (a live row
 * keeping its invocation, child runs, wait or open decision), `requeue` (a Queued/Running row
 * back to Pending to run the same attempt on the new config), `add` (a node only the new graph
 * has: a fresh Pending row), `drop` (a row that never started, of a node the new graph lacks).
 */
export type MigrationAction = 'carry' | 'keep' | 'requeue' | 'add' | 'drop';

export interface MigrationMapping {
  /** key in the run's pinned graph; null for `add` */
  from: string | null;
  /** key in the new graph; null for `drop` and for a row that cannot be mapped */
  to: string | null;
  kind: NodeKind;
  /** the row's status now (`Pending` for `add`) */
  status: NodeRunState['status'];
  action: MigrationAction;
}

export type MigrationVerdict = 'compatible' | 'needsMapping' | 'incompatible';

export interface MigrationPlan {
  verdict: MigrationVerdict;
  reasons: MigrationReason[];
  /** one entry per row of the run and per node only the new graph has, in the run's row order then new-graph order */
  mapping: MigrationMapping[];
}

export interface MigrationRequest {
  /** the run's pinned graph */
  from: Graph;
  /** the graph of the version to migrate to */
  to: Graph;
  /** the run's node rows, one per node of `from` */
  nodes: readonly NodeRunState[];
  /** the run's edge overrides (edge key → verdict); an override of an edge the new graph lacks is dropped */
  edgeOverrides?: Readonly<Record<string, boolean>>;
  /** the run's current state (folded), or null/absent when the run keeps none */
  state?: JsonObject | null;
  /** the run's status: an ended run does not migrate (absent: not judged) */
  runStatus?: RunStatus;
  /** old key → new key, for nodes renamed (or replaced) by the new version */
  nodeMap?: Readonly<Record<string, string>>;
}

const LANE_KINDS: ReadonlySet<NodeKind> = new Set(['LlmCall', 'Agent', 'Tool', 'DecisionModel']);
const HUMAN_GATES: ReadonlySet<NodeKind> = new Set(['Pause', 'ChatInput']);
const MAPPING_CODES: ReadonlySet<MigrationReasonCode> = new Set(['MapUnknownSource', 'MapUnknownTarget', 'MapTargetTaken']);

/** A row that has started: anything but a Pending row at attempt 0. */
export function hasStarted(row: Pick<NodeRunState, 'status' | 'attempt'>): boolean {
  return row.status !== 'Pending' || row.attempt > 0;
}

/** The work a live row is doing, as far as the node's definition decides it. */
function workOf(n: GraphNode): string {
  return canonicalJson({ config: n.config, inputSchema: n.inputSchema, outputSchema: n.outputSchema, writes: n.writes ?? null, onError: n.onError });
}

/** Decides a migration. Pure; never throws on a well-formed request. */
export function planMigration(req: MigrationRequest): MigrationPlan {
  const reasons: MigrationReason[] = [];
  const fixable: boolean[] = [];
  const add = (code: MigrationReasonCode, nodeKey: string | null, message: string, canMap = false) => {
    reasons.push({ code, nodeKey, message });
    fixable.push(canMap || MAPPING_CODES.has(code));
  };
  const fromIndex = indexGraph(req.from);
  const toIndex = indexGraph(req.to);
  const targetOf = checkNodeMap(req, add);

  const claimed = new Set<string>();
  for (const row of req.nodes) {
    const t = targetOf(row.nodeKey);
    if (t !== null && toIndex.nodeByKey.get(t)?.kind === row.kind) claimed.add(t);
  }
  const unclaimedKinds = new Set(req.to.nodes.filter((n) => !claimed.has(n.key)).map((n) => n.kind));

  const mapping: MigrationMapping[] = [];
  for (const row of req.nodes) {
    const t = targetOf(row.nodeKey);
    const target = t === null ? undefined : toIndex.nodeByKey.get(t);
    const started = hasStarted(row);
    if (!target || target.kind !== row.kind) {
      if (!started) {
        mapping.push({ from: row.nodeKey, to: null, kind: row.kind, status: row.status, action: 'drop' });
        continue;
      }
      const canMap = unclaimedKinds.has(row.kind);
      const missing = t === null ? `its key is taken by the node nodeMap maps onto '${row.nodeKey}'` : `has no node '${t}' in the new version`;
      if (!target) add('NodeMissing', row.nodeKey, `'${row.nodeKey}' (${row.kind}, ${row.status}) ${missing}${canMap ? '; map it with nodeMap' : ''}`, canMap);
      else add('KindChanged', row.nodeKey, `'${row.nodeKey}' is a ${row.kind} (${row.status}); '${t}' of the new version is a ${target.kind}`, canMap);
      mapping.push({ from: row.nodeKey, to: null, kind: row.kind, status: row.status, action: 'carry' });
      continue;
    }
    const source = fromIndex.nodeByKey.get(row.nodeKey);
    mapping.push({ from: row.nodeKey, to: target.key, kind: row.kind, status: row.status, action: actionOf(row, source, target, add) });
  }
  const mappedTargets = new Set(mapping.filter((m) => m.to !== null).map((m) => m.to!));
  for (const n of req.to.nodes) {
    if (!mappedTargets.has(n.key)) mapping.push({ from: null, to: n.key, kind: n.kind, status: 'Pending', action: 'add' });
  }

  if (req.runStatus !== undefined && TERMINAL_RUN_STATUSES.has(req.runStatus)) {
    add('RunEnded', null, `the run is ${req.runStatus}: only a live run migrates`);
  }
  // the replay is judged on a complete mapping only: a missing node would read as a divergence
  if (!fixable.some(Boolean)) checkReplay(req, mapping, add);
  checkState(req, add);
  const verdict: MigrationVerdict = reasons.length === 0 ? 'compatible' : fixable.every(Boolean) ? 'needsMapping' : 'incompatible';
  return { verdict, reasons, mapping };
}

type AddReason = (code: MigrationReasonCode, nodeKey: string | null, message: string, canMap?: boolean) => void;

/**
 * Validates `nodeMap` and returns the target key of each old key: its `nodeMap` entry, else its
 * own key — unless an entry maps another node onto that key (the mapped node takes it, and this
 * one has no target: dropped when it never started, `NodeMissing` when it did). Two entries
 * naming one target are `MapTargetTaken`.
 */
function checkNodeMap(req: MigrationRequest, add: AddReason): (key: string) => string | null {
  const map = req.nodeMap ?? {};
  const fromKeys = new Set(req.from.nodes.map((n) => n.key));
  const toKeys = new Set(req.to.nodes.map((n) => n.key));
  const valid = new Map<string, string>();
  const takenBy = new Map<string, string>();
  for (const [oldKey, newKey] of Object.entries(map)) {
    if (!fromKeys.has(oldKey)) add('MapUnknownSource', oldKey, `nodeMap names '${oldKey}', not a node of the run's version`);
    else if (!toKeys.has(newKey)) add('MapUnknownTarget', oldKey, `nodeMap maps '${oldKey}' to '${newKey}', not a node of the new version`);
    else {
      const holder = takenBy.get(newKey);
      if (holder !== undefined) add('MapTargetTaken', oldKey, `'${holder}' and '${oldKey}' are both mapped to '${newKey}'`);
      else {
        takenBy.set(newKey, oldKey);
        valid.set(oldKey, newKey);
      }
    }
  }
  return (key) => valid.get(key) ?? (takenBy.has(key) ? null : key);
}

function actionOf(row: NodeRunState, source: GraphNode | undefined, target: GraphNode, add: AddReason): MigrationAction {
  if (row.status === 'Pending' || row.status === 'Succeeded' || row.status === 'Failed' || row.status === 'Skipped' || row.status === 'Cancelled') {
    return 'carry';
  }
  if (HUMAN_GATES.has(row.kind) && row.status === 'WaitingForApproval') {
    const decided = row.decision && !row.decision.applied ? row.decision.decision : null;
    const allowed = row.kind === 'Pause' ? (target.config['allowedDecisions'] as unknown) : ['Answer'];
    if (decided !== null && Array.isArray(allowed) && !allowed.includes(decided)) {
      add('DecisionNotAllowed', row.nodeKey, `'${row.nodeKey}' holds a '${decided}' decision the new version's node does not allow`);
    }
    return 'keep';
  }
  const same = source !== undefined && workOf(source) === workOf(target);
  if (same) return 'keep';
  if (LANE_KINDS.has(row.kind) && (row.status === 'Queued' || row.status === 'Running')) return 'requeue';
  add('LiveWorkChanged', row.nodeKey, `'${row.nodeKey}' (${row.kind}, ${row.status}) is live and its work changed in the new version (config, schemas, writes or onError): it cannot be re-queued`);
  return 'keep';
}

/** The rows as they would read after the migration, keyed by new-graph key (live rows as they are: the replay judges history). */
function migratedRows(req: MigrationRequest, mapping: readonly MigrationMapping[]): Map<string, NodeRunState> {
  const byKey = new Map(req.nodes.map((r) => [r.nodeKey, r]));
  const rows = new Map<string, NodeRunState>();
  const toIndex = indexGraph(req.to);
  for (const m of mapping) {
    if (m.to === null) continue;
    const old = m.from === null ? undefined : byKey.get(m.from);
    const node = toIndex.nodeByKey.get(m.to)!;
    rows.set(m.to, old ? { ...old, nodeKey: m.to } : freshRow(node));
  }
  return rows;
}

/** A Pending row at attempt 0 for a node the run has not met. */
export function freshRow(n: GraphNode): NodeRunState {
  return {
    nodeKey: n.key, kind: n.kind, status: 'Pending', attempt: 0, attemptLimit: n.maxAttempts, invocationId: null, failureClass: 'None',
    cause: 'None', reason: null, input: null, inputOverride: null, output: null, notBefore: null, deadlineAt: null, queuedAt: null,
    startedAt: null, finishedAt: null, steering: [], pendingDecisionKind: null, decision: null, held: false, childRunId: null, loop: null,
  };
}

/** Edge overrides the new graph keeps: those naming one of its edges. */
export function keptOverrides(to: Graph, overrides: Readonly<Record<string, boolean>> | undefined): Record<string, boolean> {
  const keys = new Set(to.edges.map((e) => e.key));
  return Object.fromEntries(Object.entries(overrides ?? {}).filter(([k]) => keys.has(k)));
}

function admissionKind(a: Admission): string {
  return a.kind;
}

/**
 * The replay: the planner's admission of every started row and the edges every settled row
 * fires, judged on the old graph with the old rows and on the new graph with the mapped rows,
 * must agree (keyed by the old node).
 */
function checkReplay(req: MigrationRequest, mapping: readonly MigrationMapping[], add: AddReason): void {
  const oldView: RoutingView = { index: indexGraph(req.from), rows: new Map(req.nodes.map((r) => [r.nodeKey, r])), overrides: req.edgeOverrides ?? {} };
  const newView: RoutingView = { index: indexGraph(req.to), rows: migratedRows(req, mapping), overrides: keptOverrides(req.to, req.edgeOverrides) };
  const toNew = new Map(mapping.filter((m) => m.from !== null && m.to !== null).map((m) => [m.from!, m.to!]));
  const inherited = new Set(toNew.values());
  for (const row of req.nodes) {
    const t = toNew.get(row.nodeKey);
    if (t === undefined || !hasStarted(row)) continue;
    const was = admission(oldView, row.nodeKey, oldView.index.nodeByKey.get(row.nodeKey)!.joinPolicy);
    const now = admission(newView, t, newView.index.nodeByKey.get(t)!.joinPolicy);
    if (admissionKind(was) !== admissionKind(now)) {
      const waitingOn = now.kind === 'wait' ? ` (it would wait on ${pendingSources(newView, t).map((k) => `'${k}'`).join(', ')})` : '';
      add('ReplayDiverges', row.nodeKey, `'${row.nodeKey}' was ${describe(was)} on the run's version; on the new version it would be ${describe(now)}${waitingOn}`);
      continue;
    }
    if (row.status === 'Pending' || row.status === 'Queued' || row.status === 'Running' || row.status === 'WaitingForApproval') continue;
    const firedOld = firedTargets(oldView, row.nodeKey, (k) => toNew.get(k));
    const firedNew = firedTargets(newView, t, (k) => (inherited.has(k) ? k : undefined));
    if (firedOld.join(',') !== firedNew.join(',')) {
      add('RoutingChanged', row.nodeKey, `'${row.nodeKey}' fired toward [${firedOld.join(', ')}] on the run's version, toward [${firedNew.join(', ')}] on the new version`);
    }
  }
}

function describe(a: Admission): string {
  return a.kind === 'eligible' ? 'admitted' : a.kind === 'skip' ? 'skipped' : 'still waiting';
}

function pendingSources(view: RoutingView, key: string): string[] {
  return (view.index.inEdges.get(key) ?? []).filter((e) => edgeVerdict(view, e) === 'Pending').map((e) => e.from);
}

/** Targets (as new-graph keys) of the satisfied out-edges of `key`, among nodes both versions share, sorted. */
function firedTargets(view: RoutingView, key: string, shared: (target: string) => string | undefined): string[] {
  const out = new Set<string>();
  for (const e of view.index.outEdges.get(key) ?? []) {
    const t = shared(e.to);
    if (t !== undefined && edgeVerdict(view, e) === 'Satisfied') out.add(t);
  }
  return [...out].sort();
}

function checkState(req: MigrationRequest, add: AddReason): void {
  const schema = req.to.state?.schema;
  if (!schema || req.state === null || req.state === undefined) return;
  const v = validateJson(schema, req.state);
  if (!v.valid) add('StateInvalid', null, `the run's state does not satisfy the new version's state schema: ${v.errors.slice(0, 3).join('; ')}`);
}
