/**
 * The planner's working copy of one run: mutable row/run copies plus the decisions
 * recorded so far. Every row change goes through `update`, which merges it into one
 * guarded NodePatch per row (expecting the status/attempt the snapshot was read at).
 */
import type { EventKind, Json, JsonObject } from '../model';
import type { RoutingView } from './edge-verdict';
import { RunStateFold, type StateWrite } from '../state/fold';
import { indexGraph, type GraphIndex } from './graph-index';
import type {
  ConsumedSignal,
  WaitpointCreate,
  WaitpointResolve,
  CancelWork,
  ChildStart,
  NodePatch,
  NodeRunState,
  PlanContext,
  PlannedEvent,
  RunPatch,
  RunSnapshot,
  RunState,
  WorkItem,
} from './types';

type RowSet = Partial<Omit<NodeRunState, 'nodeKey' | 'kind'>>;

/**
 * The planner's working copy of a row, member by member from one object literal. A spread
 * (`{ ...row }`) would do, but rows reach the planner in several hidden shapes (as loaded, as
 * each kind of patch left them) and a spread seeing more than a few shapes takes V8's slow
 * generic path, on every row of the run on every tick; one literal gives every copy one shape.
 * Each member of NodeRunState is listed (see ROW_MEMBERS).
 */
export function copyRow(row: NodeRunState): NodeRunState {
  const copy: NodeRunState = {
    nodeKey: row.nodeKey,
    kind: row.kind,
    status: row.status,
    attempt: row.attempt,
    attemptLimit: row.attemptLimit,
    invocationId: row.invocationId,
    failureClass: row.failureClass,
    cause: row.cause,
    reason: row.reason,
    input: row.input,
    inputOverride: row.inputOverride,
    output: row.output,
    notBefore: row.notBefore,
    deadlineAt: row.deadlineAt,
    queuedAt: row.queuedAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    steering: row.steering,
    pendingDecisionKind: row.pendingDecisionKind,
    decision: row.decision,
    held: row.held,
    childRunId: row.childRunId,
    loop: row.loop,
  };
  // the optional members only where the row has them, as a spread would
  if (row.map !== undefined) copy.map = row.map;
  if (row.approvals !== undefined) copy.approvals = row.approvals;
  return copy;
}

/** The members copyRow copies; plan-state.test.ts fails to compile while NodeRunState has one more. */
export const ROW_MEMBERS = [
  'nodeKey', 'kind', 'status', 'attempt', 'attemptLimit', 'invocationId', 'failureClass', 'cause', 'reason', 'input',
  'inputOverride', 'output', 'notBefore', 'deadlineAt', 'queuedAt', 'startedAt', 'finishedAt', 'steering',
  'pendingDecisionKind', 'decision', 'held', 'childRunId', 'loop', 'map', 'approvals',
] as const satisfies readonly (keyof NodeRunState)[];

type RunSet = RunPatch['set'];

export class PlanState implements RoutingView {
  readonly index: GraphIndex;
  readonly rows = new Map<string, NodeRunState>();
  readonly run: RunState;
  readonly firedCache = new Map<string, Set<string>>();
  readonly events: PlannedEvent[] = [];
  readonly enqueue: WorkItem[] = [];
  readonly cancel: CancelWork[] = [];
  readonly startChildren: ChildStart[] = [];
  readonly cancelChildren: string[] = [];
  readonly consumedIntentIds: string[] = [];
  readonly consumedInvocationIds: string[] = [];
  /** while true, a FailRun failure waits for the batch to end so the lowest failed key decides */
  deferRunFailure = false;
  /** the run state, when the graph keeps one (null: it does not, and nothing about state costs anything) */
  readonly state: RunStateFold | null;
  /** state writes of this call, numbered by their `state.updated` event's seq */
  readonly stateWrites: StateWrite[] = [];
  /** signals consumed in this plan (`wait.ts`) */
  readonly consumedSignals: ConsumedSignal[] = [];
  /** waitpoints minted and settled in this plan (`wait.ts`) */
  readonly createdWaitpoints: WaitpointCreate[] = [];
  readonly resolvedWaitpoints: WaitpointResolve[] = [];
  private readonly patches = new Map<string, NodePatch>();
  private readonly runSet: RunSet = {};
  private runOutput: { value: Json } | null = null;

  constructor(
    readonly snapshot: RunSnapshot,
    readonly ctx: PlanContext,
  ) {
    this.index = indexGraph(snapshot.graph);
    this.run = { ...snapshot.run };
    this.state = snapshot.graph.state ? new RunStateFold(snapshot.graph.state, snapshot.stateLog ?? []) : null;
    for (const row of snapshot.nodes) this.rows.set(row.nodeKey, copyRow(row));
  }

  get now(): number {
    return this.ctx.now;
  }

  get overrides(): Readonly<Record<string, boolean>> {
    return this.run.edgeOverrides;
  }

  row(key: string): NodeRunState | undefined {
    return this.rows.get(key);
  }

  /** Change a row; merged into its single guarded patch. */
  update(key: string, set: RowSet): void {
    const row = this.rows.get(key);
    if (!row) return;
    // a status write without a cause leaves none: the cause describes the write that set the status
    if (set.status !== undefined && set.cause === undefined && row.cause !== 'None') set = { ...set, cause: 'None' };
    let patch = this.patches.get(key);
    if (!patch) {
      const original = this.original(key) ?? row;
      patch = { nodeKey: key, expect: { status: original.status, attempt: original.attempt }, set: {} };
      this.patches.set(key, patch);
    }
    Object.assign(row, set);
    Object.assign(patch.set, set);
    this.firedCache.delete(key);
  }

  /**
   * The row as the snapshot holds it (what its patch expects). Rows usually follow the graph's
   * order, so the node's document position finds it without a map built on every plan call.
   */
  private original(key: string): NodeRunState | undefined {
    const at = this.index.order.get(key);
    const guess = at === undefined ? undefined : this.snapshot.nodes[at];
    return guess?.nodeKey === key ? guess : this.snapshot.nodes.find((r) => r.nodeKey === key);
  }

  /** Change the run row; merged into the single guarded RunPatch. */
  updateRun(set: RunSet): void {
    Object.assign(this.run, set);
    Object.assign(this.runSet, set);
  }

  setRunOutput(value: Json): void {
    this.runOutput = { value };
  }

  /** The seq the next emitted event will have once the plan commits (the applier numbers them lastSeq+1, …). */
  nextSeq(): number {
    return this.snapshot.run.lastSeq + this.events.length + 1;
  }

  emit(kind: EventKind, nodeKey: string | null, detail: JsonObject = {}): void {
    this.events.push({ kind, nodeKey, detail });
  }

  nodePatches(): NodePatch[] {
    return [...this.patches.values()];
  }

  runPatch(): RunPatch | null {
    const set: RunSet = { ...this.runSet };
    if (this.runOutput) set.output = this.runOutput.value;
    if (Object.keys(set).length === 0 && this.events.length === 0) return null;
    return { expectVersion: this.snapshot.run.version, set };
  }
}
