/**
 * `blockers(snapshot, facts)`: for each non-terminal node of a live run, the ONE thing it
 * waits for (CONTRACT addition, GET /v1/runs/{id}/blockers). Pure: the shell gathers the
 * facts outside the run rows (shard lease, tenant slots, lane jobs) and passes `now`.
 *
 * Precedence, first match wins: a shard without a live owner (nothing of the run moves), a
 * Pending run without a slot, then without a place of its concurrency key, a Cancelling run's drain, an unapplied intent or outcome of the
 * node (the next tick applies it), then the node's own state.
 */
import { isParkedWait } from '../planner/wait';
import { gatePolicy, gateState } from '../planner/approval-gate';
import { approvalSummary } from '../approval/summary';
import { deciderStanding } from '../approval/policy';
import { waitPlanOf } from '../wait/wait-arms';
import { CHILD_KINDS, TERMINAL_NODE_STATUSES, TERMINAL_RUN_STATUSES, type JoinPolicy, type JsonObject, type RunStatus } from '../model';
import { admission } from '../planner/admission';
import { branchBoundOf } from '../planner/branch-bound';
import { inboundVerdicts, type RoutingView } from '../planner/edge-verdict';
import { indexGraph } from '../planner/graph-index';
import { retriesSpent } from '../planner/retry-budget';
import type { NodeRunState, RunSnapshot } from '../planner/types';
import type { Blocker, BlockerDetails, BlockerFacts, BlockerKind } from './types';

type Verdict = Omit<Blocker, 'nodeKey' | 'status'>;

/**
 * The blockers of every non-terminal node, document order. A finished run has none, except
 * one that a spent budget failed: its rows left Pending name that budget, so "nothing waits"
 * is never the answer for work that can no longer run.
 */
export function blockers(snapshot: RunSnapshot, facts: BlockerFacts): Blocker[] {
  if (TERMINAL_RUN_STATUSES.has(snapshot.run.status)) return spentBudgetBlockers(snapshot, facts);
  const index = indexGraph(snapshot.graph);
  const rows = new Map(snapshot.nodes.map((r) => [r.nodeKey, r]));
  const view: RoutingView = { index, rows, overrides: snapshot.run.edgeOverrides };
  const out: Blocker[] = [];
  for (const row of snapshot.nodes) {
    if (TERMINAL_NODE_STATUSES.has(row.status)) continue;
    out.push({ nodeKey: row.nodeKey, status: row.status, ...judge(snapshot, view, facts, row) });
  }
  return out;
}

const at = (kind: BlockerKind, since: number | null, details: BlockerDetails = {}): Verdict => ({ kind, since, details });
const tick = (reason: string, since: number | null): Verdict => at('tick', since, { reason });

function judge(snap: RunSnapshot, view: RoutingView, facts: BlockerFacts, row: NodeRunState): Verdict {
  const run = snap.run;
  const { shard } = facts;
  if (shard && (shard.owner === null || shard.expiresAt === null || shard.expiresAt <= facts.now)) {
    return at('shardOwner', shard.expiresAt, { shard: shard.shard, owner: shard.owner, expiresAt: shard.expiresAt });
  }
  // a delayed start: every node waits for the run's notBefore (then the run is an ordinary Pending one)
  if (run.status === 'Scheduled' && (run.notBefore ?? 0) > facts.now) return at('timer', run.createdAt, { until: run.notBefore! });
  if (run.status === 'Pending' || run.status === 'Scheduled') {
    if (!snap.runSlotAvailable) return at('runSlot', run.createdAt, facts.slots ? { ...facts.slots } : {});
    if (snap.concurrencyKeyAvailable === false) return at('concurrencyKey', run.createdAt, facts.concurrency ? { ...facts.concurrency } : {});
    return tick('the run starts on the next tick', run.createdAt);
  }
  if (run.status === 'Cancelling') return judgeDrain(snap, facts, row);
  const intent = snap.intents.find((i) => i.kind === 'cancel' || ('nodeKey' in i && i.nodeKey === row.nodeKey));
  if (intent) return tick(`an unapplied ${intent.kind} intent`, null);
  if (row.invocationId !== null && snap.results.some((r) => r.invocationId === row.invocationId)) {
    return tick('an outcome waits to be applied', null);
  }
  // work that can never run says so, ahead of what it would otherwise wait for (never a silent Running)
  const missing = row.status === 'WaitingForApproval' ? undefined : facts.unavailable?.[row.nodeKey];
  if (missing && missing.length > 0) return at('unavailable', row.startedAt, { missing: [...missing] });
  switch (row.status) {
    case 'Pending':
      return judgePending(snap, view, facts, row);
    case 'WaitingForApproval':
      if (row.decision && !row.decision.applied) return tick('a decision waits to be applied', row.decision.at);
      return at('gate', row.startedAt, { decisionKind: row.pendingDecisionKind ?? 'Approve', scope: 'run', ...(facts.toolCalls?.[row.nodeKey] ?? {}), ...gateApproval(snap, row, facts) });
    default:
      return judgeInFlight(snap, facts, row);
  }
}

function judgeDrain(snap: RunSnapshot, facts: BlockerFacts, row: NodeRunState): Verdict {
  if (row.childRunId !== null && CHILD_KINDS.has(row.kind)) return childVerdict(snap, facts, row);
  if (row.status === 'Queued' || row.status === 'Running') {
    return at('cancelDrain', snap.run.startedAt, { invocationId: row.invocationId ?? '', deadlineAt: row.deadlineAt });
  }
  if (row.status === 'WaitingForApproval') return tick('the cancel cancels it on the next tick', null);
  return at('runCancelling', null);
}

function judgePending(snap: RunSnapshot, view: RoutingView, facts: BlockerFacts, row: NodeRunState): Verdict {
  const node = view.index.nodeByKey.get(row.nodeKey);
  if (!node) return tick('the node is not in the pinned graph', null);
  const adm = admission(view, row.nodeKey, node.joinPolicy);
  const inbound = inboundVerdicts(view, row.nodeKey);
  const settledAt = latestFinish(snap, view, row.nodeKey);
  if (adm.kind === 'skip') return tick('the node is skipped on the next tick', settledAt);
  if (adm.kind === 'wait') {
    const open = inbound.filter((v) => v.verdict === 'Pending' || v.verdict === 'Held');
    const waitingOn = [...new Set(open.map((v) => v.edge.from))];
    if (open.length > 0 && open.every((v) => v.verdict === 'Held')) return at('heldDecision', settledAt, { waitingOn });
    if (inbound.length < 2) return at('upstream', settledAt, { waitingOn });
    const satisfied = inbound.filter((v) => v.verdict === 'Satisfied').length;
    return at('join', settledAt, { waitingOn, joinPolicy: node.joinPolicy, satisfied, needed: needed(node.joinPolicy, inbound.length) });
  }
  if (row.notBefore !== null && row.notBefore > facts.now) return at('timer', row.finishedAt, { until: row.notBefore });
  const bound = branchBoundOf(view, row.nodeKey);
  if (bound) return at('branchPlace', settledAt, { ...bound });
  const allowance = snap.run.stepAllowance;
  const gatedBy = snap.run.breakpoints.includes(row.nodeKey) ? 'breakpoint' : snap.run.paused ? 'runPaused' : null;
  if (gatedBy === null) return tick('eligible: admitted on the next tick', settledAt);
  if (allowance && (allowance.mode !== 'node' || allowance.nodeKey === row.nodeKey)) {
    return tick(`a '${allowance.mode}' step allowance admits it on the next tick`, settledAt);
  }
  return at(gatedBy, settledAt);
}

/** Inbound edges a policy needs Satisfied (Any: one, with none pending). */
function needed(policy: JoinPolicy, inbound: number): number {
  if (policy === 'All') return inbound;
  if (policy === 'Any' || policy === 'First') return 1;
  return Math.max(1, Math.min(policy.quorum, inbound));
}

/** When the last settled inbound source finished, else when the run started. */
function latestFinish(snap: RunSnapshot, view: RoutingView, key: string): number | null {
  let latest: number | null = null;
  for (const e of view.index.inEdges.get(key) ?? []) {
    const f = view.rows.get(e.from)?.finishedAt ?? null;
    if (f !== null && (latest === null || f > latest)) latest = f;
  }
  return latest ?? snap.run.startedAt;
}

function judgeInFlight(snap: RunSnapshot, facts: BlockerFacts, row: NodeRunState): Verdict {
  if (CHILD_KINDS.has(row.kind)) return childVerdict(snap, facts, row);
  if (isParkedWait(row)) return waitVerdict(snap, facts, row);
  if (row.invocationId === null) return tick(`a ${row.status} row without an invocation`, row.queuedAt);
  if (row.deadlineAt !== null && row.deadlineAt <= facts.now) return tick('its deadline passed: it times out on the next tick', row.deadlineAt);
  const base = { invocationId: row.invocationId, deadlineAt: row.deadlineAt };
  const job = facts.jobs?.[row.invocationId];
  if (!job) return row.status === 'Queued' ? at('laneBacklog', row.queuedAt, { ...base, position: null, depth: null }) : at('worker', row.startedAt, base);
  switch (job.state) {
    case 'missing':
      return tick('its job is missing from its lane: the in-flight check enqueues it again', row.queuedAt);
    case 'waiting':
      return at('laneBacklog', row.queuedAt, { ...base, window: 'lane', position: job.position, depth: job.depth });
    case 'held':
      return at('laneBacklog', row.queuedAt, { ...base, window: 'held', position: job.position, depth: job.depth });
    case 'admitting':
      return at('admission', row.queuedAt, base);
    case 'running':
      return at('worker', row.startedAt ?? row.queuedAt, base);
    case 'orphaned':
      return tick('its worker is gone: the in-flight check interrupts it', row.startedAt ?? row.queuedAt);
    case 'finished':
      return tick('its job finished: the outcome is applied on the next tick', null);
  }
}

function childVerdict(snap: RunSnapshot, facts: BlockerFacts, row: NodeRunState): Verdict {
  // a Map waits on the children it keeps working: named by the first one
  const childRunId = row.childRunId ?? row.map?.live[0]?.childRunId ?? '';
  const childStatus = snap.children.find((c) => c.childRunId === childRunId)?.status ?? facts.children?.[childRunId] ?? null;
  if (childStatus !== null && TERMINAL_RUN_STATUSES.has(childStatus as RunStatus)) {
    return tick(`its child run ended ${childStatus}: applied on the next tick`, null);
  }
  return at('child', row.startedAt, { childRunId, childStatus });
}

/**
 * A run failed by a spent budget: the retry budget (MAX_TOTAL_ATTEMPTS, judged when the
 * deployment's limit is among the facts) or the run's own `budget` (BudgetExceeded). Every
 * row it left non-terminal is blocked by that budget; any other finished run has no blockers.
 */
function spentBudgetBlockers(snap: RunSnapshot, facts: BlockerFacts): Blocker[] {
  const run = snap.run;
  if (run.status !== 'Failed') return [];
  let details: BlockerDetails | null = null;
  const spent = retriesSpent(snap.nodes);
  if (run.failureClass === 'AttemptsExhausted' && facts.maxTotalAttempts !== undefined && spent >= facts.maxTotalAttempts) {
    details = { budget: 'MAX_TOTAL_ATTEMPTS', limit: facts.maxTotalAttempts, spent, reason: run.reason ?? '' };
  } else if (run.failureClass === 'BudgetExceeded') {
    details = { budget: 'run', reason: run.reason ?? '' };
  }
  if (details === null) return [];
  const out: Blocker[] = [];
  for (const row of snap.nodes) {
    if (TERMINAL_NODE_STATUSES.has(row.status)) continue;
    out.push({ nodeKey: row.nodeKey, status: row.status, kind: 'budgetExhausted', since: run.finishedAt, details: { ...details } });
  }
  return out;
}

/**
 * A parked Wait: what its arms wait on. A plain Wait names its one arm's kind (timer, signal,
 * token, event); a composite one reads `wait` and lists its arms. A token arm carries its
 * waitpoint and, when the shell passes it, its signed callback URL.
 */
function waitVerdict(snap: RunSnapshot, facts: BlockerFacts, row: NodeRunState): Verdict {
  if (row.deadlineAt !== null && row.deadlineAt <= facts.now) return tick('its wake time came: it fires on the next tick', row.deadlineAt);
  const node = snap.graph.nodes.find((n) => n.key === row.nodeKey);
  const parsed = node ? waitPlanOf(node.config) : null;
  const until = row.deadlineAt === null ? {} : { until: row.deadlineAt };
  if (!parsed?.ok) return at('timer', row.startedAt, until);
  const wps = (snap.waitpoints ?? []).filter((w) => w.nodeKey === row.nodeKey);
  if (wps.some((w) => w.status === 'completed')) return tick('a waitpoint was completed: the Wait fires on the next tick', null);
  const arms = parsed.plan.arms.map((arm, index) => {
    const wp = wps.find((w) => w.index === index);
    const url = wp ? facts.callbackUrls?.[wp.id] : undefined;
    switch (arm.kind) {
      case 'signal':
        return { index, kind: arm.kind, channel: arm.channel };
      case 'event':
        return { index, kind: arm.kind, event: arm.name };
      case 'token':
        return { index, kind: arm.kind, ...(wp ? { waitpointId: wp.id } : {}), ...(url ? { callbackUrl: url } : {}), ...(wp?.expiresAt != null ? { until: wp.expiresAt } : {}) };
      case 'timer':
        return { index, kind: arm.kind };
    }
  });
  if (parsed.plan.mode !== 'one') return at('wait', row.startedAt, { mode: parsed.plan.mode, arms, ...until });
  const { index: _index, kind, ...details } = arms[0]!;
  return at(kind, row.startedAt, kind === 'timer' ? until : details);
}

/** A policy Pause's standing, for its gate blocker (none without a policy). */
function gateApproval(snap: RunSnapshot, row: NodeRunState, facts: BlockerFacts): { approval?: JsonObject } {
  const policy = gatePolicy(snap.graph.nodes.find((n) => n.key === row.nodeKey));
  if (!policy) return {};
  const votes = row.approvals ?? [];
  const v = facts.viewer;
  const openedAt = row.startedAt ?? facts.now;
  const viewer = v ? { principal: v.decider.id, standing: deciderStanding({ policy, votes, decider: v.decider, initiator: v.initiator, definitionAuthor: v.definitionAuthor, openedAt, now: facts.now }) } : undefined;
  return { approval: approvalSummary(gateState(policy, row, facts.now), votes, viewer) };
}
