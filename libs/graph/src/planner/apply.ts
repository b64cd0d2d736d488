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
  return {
    ...snapshot,
    run,
    nodes,
    ...(stateLog ? { stateLog } : {}),
    results: snapshot.results.filter((r) => !consumedInv.has(r.invocationId)),
    started: snapshot.started.filter((s) => !consumedInv.has(s.invocationId)),
    intents: snapshot.intents.filter((i) => !consumedIntents.has(i.id)),
  };
}
