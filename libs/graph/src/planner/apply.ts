/**
 * Apply a PlanResult to a snapshot in memory, with the same guards the store uses:
 * a node patch lands only where the row still has the expected status and attempt;
 * the run patch only at the expected version (version + 1, lastSeq + events).
 * Consumed intents, results and starts are removed; the plan's state writes join the state
 * log. Children are left as they were.
 */
import type { NodeRunState, PlanResult, RunSnapshot } from './types';

export function applyPlanToSnapshot(snapshot: RunSnapshot, result: PlanResult): RunSnapshot {
  const patches = new Map(result.nodes.map((p) => [p.nodeKey, p]));
  const nodes: NodeRunState[] = snapshot.nodes.map((row) => {
    const p = patches.get(row.nodeKey);
    if (!p || p.expect.status !== row.status || p.expect.attempt !== row.attempt) return row;
    return { ...row, ...p.set };
  });
  let run = snapshot.run;
  let stateLog = snapshot.stateLog;
  if (result.run && result.run.expectVersion === run.version) {
    const { output: _output, ...set } = result.run.set;
    run = { ...run, ...set, version: run.version + 1, lastSeq: run.lastSeq + result.events.length };
    if (result.stateWrites) stateLog = [...(stateLog ?? []), ...result.stateWrites];
  }
  const consumedInv = new Set(result.consumedInvocationIds);
  const consumedIntents = new Set(result.consumedIntentIds);
  const consumedSignals = new Set((result.consumedSignals ?? []).map((c) => c.signalId));
  const { signals: before, waitpoints: wpBefore, ...rest } = snapshot;
  const signals = before?.filter((s) => !consumedSignals.has(s.id));
  // waitpoints: the minted ones join (waiting), the settled ones leave
  const settled = new Set((result.resolvedWaitpoints ?? []).map((w) => w.id));
  const waitpoints = [
    ...(wpBefore ?? []),
    ...(result.createdWaitpoints ?? []).map((c) => ({
      id: c.id, nodeKey: c.nodeKey, index: c.index, kind: c.kind, status: 'waiting' as const, payload: null,
      completedAt: null, expiresAt: c.expiresAt, eventName: c.eventName, createdAt: c.createdAt,
    })),
  ].filter((w) => !settled.has(w.id));
  return {
    ...rest,
    run,
    nodes,
    ...(stateLog ? { stateLog } : {}),
    results: snapshot.results.filter((r) => !consumedInv.has(r.invocationId)),
    started: snapshot.started.filter((s) => !consumedInv.has(s.invocationId)),
    intents: snapshot.intents.filter((i) => !consumedIntents.has(i.id)),
    ...(signals && signals.length > 0 ? { signals } : {}),
    ...(waitpoints.length > 0 ? { waitpoints } : {}),
  };
}
