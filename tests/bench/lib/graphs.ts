/** Graph documents of the workloads: every working node is a no-op `echo` Tool. */
import type { Json, JsonObject } from '@flowline/graph';
import { canonicalWithTool } from '@flowline/testing';

const tool = (key: string, toolName = 'echo', args: JsonObject = { n: 1 }): Json => ({
  key,
  kind: 'Tool',
  config: { toolName, arguments: args },
});

/** Start → t1 → … → tN → End. */
export function chain(n: number, toolName = 'echo', args: JsonObject = { n: 1 }): JsonObject {
  const nodes: Json[] = [{ key: 'start', kind: 'Start' }];
  const edges: Json[] = [];
  let prev = 'start';
  for (let i = 1; i <= n; i++) {
    nodes.push(tool(`t${i}`, toolName, args));
    edges.push({ key: `e${i}`, from: prev, to: `t${i}` });
    prev = `t${i}`;
  }
  nodes.push({ key: 'end', kind: 'End', config: { outcome: 'done' } });
  edges.push({ key: 'eend', from: prev, to: 'end' });
  return { schemaVersion: 1, nodes, edges };
}

/** Start → K parallel t1..tK → Join (All) → End. */
export function fan(k: number): JsonObject {
  const nodes: Json[] = [{ key: 'start', kind: 'Start' }];
  const edges: Json[] = [];
  for (let i = 1; i <= k; i++) {
    nodes.push(tool(`t${i}`));
    edges.push({ key: `a${i}`, from: 'start', to: `t${i}` }, { key: `b${i}`, from: `t${i}`, to: 'join' });
  }
  nodes.push({ key: 'join', kind: 'Join', joinPolicy: 'All', config: {} });
  nodes.push({ key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'run.input' } });
  edges.push({ key: 'eend', from: 'join', to: 'end' });
  return { schemaVersion: 1, nodes, edges };
}

/** Start → Pause → End: a run that parks until decided. */
/** A run parked on a durable timer, `Wait PT1H` by default (no worker, no run slot while it waits). */
export function parkedOnTimer(duration = 'PT1H'): JsonObject {
  return {
    schemaVersion: 1,
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'nap', kind: 'Wait', config: { for: duration } },
      { key: 'end', kind: 'End', config: { outcome: 'woke' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'nap' },
      { key: 'e2', from: 'nap', to: 'end' },
    ],
  };
}

export function parked(): JsonObject {
  return {
    schemaVersion: 1,
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'review', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } },
      { key: 'end', kind: 'End', joinPolicy: 'Any', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'review' },
      {
        key: 'e2',
        from: 'review',
        to: 'end',
        condition: { path: 'output.decision', op: 'Eq', value: 'Approve' },
      },
      {
        key: 'e3',
        from: 'review',
        to: 'end',
        condition: { path: 'output.decision', op: 'Eq', value: 'Reject' },
      },
    ],
  };
}

/** The canonical eight-node graph, Agent replaced by echo (tests/e2e); input `{ requiresReview: true }` takes the Pause. */
export const canonical = canonicalWithTool;

/**
 * The canonical graph with run state: every node appends its envelope's `status` to one
 * `append` key, so each hop also folds and commits a state write (what state costs per node).
 */
export function canonicalWithState(): JsonObject {
  const doc = canonical();
  const nodes = doc.nodes as JsonObject[];
  for (const n of nodes) n.writes = { trail: 'status' };
  return { ...doc, state: { reducers: { trail: 'append' }, initial: { trail: [] } } };
}
