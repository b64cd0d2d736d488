/**
 * Wait nodes: the planner parks the row itself (`parkWait` in admit.ts). Reached, the row reads
 * Running with no invocation and no child, and its `deadlineAt` holds the earliest time one of
 * its arms fires by time alone (a timer, a token's expiry) — so the wake is the same
 * `runs.wake_at` every deadline and backoff already sets, and nothing holds a worker or a
 * timer in memory. A run whose only work is parked Waits reads WaitingForApproval
 * (`recompute.ts`), so it holds no MAX_CONCURRENT_RUNS slot, like a run parked on a person.
 *
 * Each tick judges every arm of every parked Wait (`wait/wait-arms.ts`):
 * - timer: holds once its time has come;
 * - signal: the oldest signal of its channel not consumed yet that passes its filter;
 * - token: its waitpoint was completed (a callback landed), or has expired;
 * - event: the oldest event of its name received since the arm began that passes its filter.
 * A plain Wait or `any` fires on one arm: a delivered signal, token or event outranks a timer
 * (or a token's expiry) due in the same tick — the delivery committed first, the timer had not —
 * and among equals the earliest, then the lowest index. `all` fires when every arm holds.
 * The losers are withdrawn in the same commit: a signal not taken stays for a later Wait, a
 * waitpoint is revoked. Every effect (signals consumed, waitpoints settled) commits with the
 * node's success in the run's version-guarded apply, and any delivery bumps the run's version,
 * so a plan that did not see it cannot commit.
 */
import type { GraphNode, Json, JsonObject } from '../model';
import { inputDocumentAsJson } from '../documents/inline-output';
import { isoOf } from '../wait/civil-time';
import { filterHolds, filterScope, waitPlanOf, type WaitArm, type WaitPlan } from '../wait/wait-arms';
import { timerWakeAt } from '../wait/wait-time';
import type { PlanState } from './plan-state';
import { failNode, settleSuccess } from './settle';
import type { NodeRunState, RunWaitpoint, WaitpointResolve } from './types';

/** A Wait row parked on its arms (not settled, not cancelled). */
export function isParkedWait(row: NodeRunState): boolean {
  return row.kind === 'Wait' && row.status === 'Running' && row.invocationId === null && row.childRunId === null;
}

/** One arm that holds at this tick. */
interface Holding {
  index: number;
  kind: WaitArm['kind'];
  /** when it fired, epoch ms */
  at: number;
  /** delivered from outside (signal, token callback, event) rather than by time */
  delivered: boolean;
  /** the entry of the output's `fired` list */
  entry: JsonObject;
  /** what firing it commits */
  signalId?: string;
  waitpoint?: WaitpointResolve;
}

/**
 * Settle every parked Wait that can fire, in document order (not while the run is Cancelling:
 * the drain cancels them, and `withdrawStaleWaitpoints` revokes their waitpoints).
 */
export function fireDueWaits(st: PlanState): void {
  if (st.run.status === 'Cancelling') return;
  for (const node of st.snapshot.graph.nodes) {
    const row = st.row(node.key);
    if (row && isParkedWait(row)) settleWait(st, node, row);
  }
}

/** The waitpoints of a Wait row: loaded with the snapshot, or minted earlier in this plan. */
function waitpointsOf(st: PlanState, nodeKey: string): RunWaitpoint[] {
  const created: RunWaitpoint[] = st.createdWaitpoints
    .filter((c) => c.nodeKey === nodeKey)
    .map((c) => ({ id: c.id, nodeKey, index: c.index, kind: c.kind, status: 'waiting', payload: null, completedAt: null, expiresAt: c.expiresAt, eventName: c.eventName, createdAt: c.createdAt }));
  return [...(st.snapshot.waitpoints ?? []).filter((w) => w.nodeKey === nodeKey), ...created];
}

const byTime = (a: { at: number; id: string }, b: { at: number; id: string }) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** When a timer arm fires for a row parked at `row.startedAt` over its input document; an error sentence when it cannot. */
function timerAt(arm: Extract<WaitArm, { kind: 'timer' }>, row: NodeRunState): { at: number } | { error: string } {
  const config = arm.for !== null ? { for: arm.for } : { until: arm.until };
  const doc = row.input ? inputDocumentAsJson(row.input) : {};
  return timerWakeAt(config, doc, row.startedAt ?? 0) ?? { error: 'Wait config names no timer' };
}

/** Whether arm `index` holds now; `taken` holds the signal and event ids other arms already took. */
function holding(st: PlanState, row: NodeRunState, arm: WaitArm, index: number, taken: Set<string>): Holding | null {
  const base = { index, kind: arm.kind };
  const wp = waitpointsOf(st, row.nodeKey).find((w) => w.index === index);
  switch (arm.kind) {
    case 'timer': {
      const t = timerAt(arm, row);
      if ('error' in t || t.at > st.now) return null;
      return { ...base, at: t.at, delivered: false, entry: { index, kind: 'timer', timer: arm.for ?? arm.until, payload: null, at: isoOf(t.at) } };
    }
    case 'signal': {
      const runInput = st.run.input as Json;
      const signal = (st.snapshot.signals ?? [])
        .filter((s) => s.channel === arm.channel && !taken.has(s.id) && filterHolds(arm.filter, filterScope('signal', s.payload, runInput)))
        .sort(byTime)[0];
      if (!signal) return null;
      return { ...base, at: signal.at, delivered: true, signalId: signal.id, entry: { index, kind: 'signal', signal: arm.channel, payload: signal.payload, at: isoOf(signal.at) } };
    }
    case 'token': {
      if (!wp) return null;
      const entry = (payload: Json, at: number, expired: boolean, revoked: boolean): JsonObject => ({ index, kind: 'token', token: wp.id, payload, expired, revoked, at: isoOf(at) });
      if (wp.status === 'completed') {
        const at = wp.completedAt ?? st.now;
        return { ...base, at, delivered: true, waitpoint: { id: wp.id, nodeKey: row.nodeKey, status: 'completed' }, entry: entry(wp.payload, at, false, false) };
      }
      // a revoked token fires its arm at once, like an expiry: the Wait never waits on a dead token
      if (wp.status === 'revoked') {
        const at = wp.completedAt ?? st.now;
        return { ...base, at, delivered: false, waitpoint: { id: wp.id, nodeKey: row.nodeKey, status: 'revoked' }, entry: entry(null, at, false, true) };
      }
      if (wp.expiresAt === null || wp.expiresAt > st.now) return null;
      return { ...base, at: wp.expiresAt, delivered: false, waitpoint: { id: wp.id, nodeKey: row.nodeKey, status: 'expired' }, entry: entry(null, wp.expiresAt, true, false) };
    }
    case 'event': {
      if (!wp) return null;
      const runInput = st.run.input as Json;
      const event = (st.snapshot.waitEvents ?? [])
        .filter((e) => e.name === arm.name && e.at >= wp.createdAt && !taken.has(e.id) && filterHolds(arm.filter, filterScope('event', e.data, runInput)))
        .sort(byTime)[0];
      if (!event) return null;
      return {
        ...base, at: event.at, delivered: true,
        waitpoint: { id: wp.id, nodeKey: row.nodeKey, status: 'completed', payload: event.data, eventId: event.id },
        entry: { index, kind: 'event', event: arm.name, eventId: event.id, payload: event.data, at: isoOf(event.at) },
      };
    }
  }
}

/** The arms that fire now under the Wait's mode: one (a plain Wait, `any`), every one (`all`), or none. */
function firing(st: PlanState, row: NodeRunState, plan: WaitPlan): Holding[] {
  const taken = new Set<string>(st.consumedSignals.map((c) => c.signalId));
  if (plan.mode === 'all') {
    const all: Holding[] = [];
    for (const [i, arm] of plan.arms.entries()) {
      const h = holding(st, row, arm, i, taken);
      if (!h) return [];
      if (h.signalId) taken.add(h.signalId);
      if (h.waitpoint?.eventId) taken.add(h.waitpoint.eventId);
      all.push(h);
    }
    return all;
  }
  const held = plan.arms.map((arm, i) => holding(st, row, arm, i, taken)).filter((h): h is Holding => h !== null);
  held.sort((a, b) => Number(b.delivered) - Number(a.delivered) || a.at - b.at || a.index - b.index);
  return held.slice(0, 1);
}

/** The Wait's output for the arms that fired (see the Wait kind's description). */
function outputOf(plan: WaitPlan, fired: Holding[]): JsonObject {
  const first = fired[0]!;
  const e = first.entry;
  if (plan.mode === 'one') {
    switch (first.kind) {
      case 'timer':
        return { fired: 'timer', at: e['at']! };
      case 'signal':
        return { fired: 'signal', channel: e['signal']!, payload: e['payload']!, at: e['at']! };
      case 'token':
        return { fired: 'token', token: e['token']!, payload: e['payload']!, expired: e['expired']!, revoked: e['revoked']!, at: e['at']! };
      case 'event':
        return { fired: 'event', event: e['event']!, eventId: e['eventId']!, payload: e['payload']!, at: e['at']! };
    }
  }
  const at = Math.max(...fired.map((f) => f.at));
  return { mode: plan.mode, fired: fired.map((f) => f.entry), index: first.index, kind: first.kind, payload: e['payload'] ?? null, at: isoOf(at) };
}

/**
 * Fire a parked Wait if its arms say so: settle it with its output, consume the winning
 * signals and settle its waitpoints (the winners completed or expired, the rest revoked), all in
 * this plan. Returns whether it fired.
 */
export function settleWait(st: PlanState, node: GraphNode, row: NodeRunState): boolean {
  const parsed = waitPlanOf(node.config);
  if (!parsed.ok) {
    failNode(st, row.nodeKey, 'ValidationFailed', parsed.errors.join('; '));
    return false;
  }
  const fired = firing(st, row, parsed.plan);
  if (fired.length === 0) return false;
  settleSuccess(st, row.nodeKey, outputOf(parsed.plan, fired));
  // a success the planner refused (output too large, outputSchema) still used its deliveries up
  for (const f of fired) if (f.signalId) st.consumedSignals.push({ signalId: f.signalId, nodeKey: row.nodeKey });
  const won = new Map(fired.flatMap((f) => (f.waitpoint ? [[f.waitpoint.id, f.waitpoint] as const] : [])));
  for (const w of waitpointsOf(st, row.nodeKey)) {
    st.resolvedWaitpoints.push(won.get(w.id) ?? { id: w.id, nodeKey: row.nodeKey, status: 'revoked' });
  }
  return true;
}

/**
 * Waitpoints whose Wait no longer waits (cancelled, completed by an operator, skipped, failed)
 * are revoked with the plan that ended it, so a callback of a Wait that is gone answers 410.
 */
export function withdrawStaleWaitpoints(st: PlanState): void {
  const settled = new Set(st.resolvedWaitpoints.map((w) => w.id));
  const all = [...(st.snapshot.waitpoints ?? []), ...st.createdWaitpoints];
  for (const w of all) {
    if (settled.has(w.id)) continue;
    const row = st.row(w.nodeKey);
    if (row && isParkedWait(row)) continue;
    st.resolvedWaitpoints.push({ id: w.id, nodeKey: w.nodeKey, status: 'revoked' });
    settled.add(w.id);
  }
}

/**
 * Park a Wait reached in this tick: mint a waitpoint per token and event arm (a token's expiry
 * counted from now), keep the earliest time-bearing arm's time in `deadlineAt`, then fire at
 * once if an arm already holds (a signal sent before the node was reached, a time already past).
 */
export function parkArms(st: PlanState, node: GraphNode, attempt: number): void {
  const parsed = waitPlanOf(node.config);
  if (!parsed.ok) return failNode(st, node.key, 'ValidationFailed', parsed.errors.join('; '));
  const { plan } = parsed;
  const row = st.row(node.key)!;
  const times: number[] = [];
  for (const [index, arm] of plan.arms.entries()) {
    if (arm.kind === 'timer') {
      const t = timerAt(arm, row);
      if ('error' in t) return failNode(st, node.key, 'ValidationFailed', t.error);
      times.push(t.at);
    } else if (arm.kind === 'token' || arm.kind === 'event') {
      const id = st.ctx.newId();
      const expiresAt = arm.kind === 'token' ? st.now + arm.timeoutMs : null;
      if (expiresAt !== null) times.push(expiresAt);
      st.createdWaitpoints.push({
        id, nodeKey: node.key, index, kind: arm.kind, expiresAt, createdAt: st.now,
        schema: arm.kind === 'token' ? arm.schema : null, singleUse: arm.kind === 'token' ? arm.singleUse : true,
        eventName: arm.kind === 'event' ? arm.name : null,
      });
      if (arm.kind === 'token') st.emit('waitpoint.created', node.key, { waitpointId: id, index, expiresAt: isoOf(expiresAt!) });
    }
  }
  const wakeAt = times.length > 0 ? Math.min(...times) : null;
  st.update(node.key, { deadlineAt: wakeAt });
  st.emit('node.started', node.key, startedDetail(plan, attempt, wakeAt));
  settleWait(st, node, st.row(node.key)!);
}

/** The node.started detail of a parked Wait: a plain timer or signal Wait keeps its short form. */
function startedDetail(plan: WaitPlan, attempt: number, wakeAt: number | null): JsonObject {
  const arm = plan.arms[0]!;
  if (plan.mode === 'one' && arm.kind === 'signal') return { attempt, signal: arm.channel };
  const wake: JsonObject = wakeAt === null ? {} : { wakeAt: isoOf(wakeAt) };
  if (plan.mode === 'one' && arm.kind === 'timer') return { attempt, ...wake };
  return { attempt, mode: plan.mode, arms: plan.arms.map((a) => a.kind), ...wake };
}
