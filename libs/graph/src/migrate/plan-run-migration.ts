/**
 * The migration plan of one run as a caller holds it: its snapshot (pinned graph, node rows,
 * edge overrides, state log) and the target graph. The single-run route and the bulk runner
 * decide through this one function, so a run gets the same verdict either way.
 */
import { foldState } from '../state/fold';
import type { Graph } from '../model';
import type { RunSnapshot } from '../planner/types';
import { planMigration, type MigrationPlan } from './migration-plan';

/**
 * Plans moving the run of `snap` onto `to`: the run's state is folded under the new graph's
 * state declaration (what the new graph will read; none when it declares none), then
 * {@link planMigration} judges every row.
 */
export function planRunMigration(snap: RunSnapshot, to: Graph, nodeMap: Readonly<Record<string, string>>): MigrationPlan {
  return planMigration({
    from: snap.graph,
    to,
    nodes: snap.nodes,
    edgeOverrides: snap.run.edgeOverrides,
    runStatus: snap.run.status,
    state: to.state ? foldState(to.state, snap.stateLog ?? []) : null,
    nodeMap,
  });
}
