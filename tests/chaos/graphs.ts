/**
 * The chaos workload's graph shapes. Every side-effecting step is a `chaos_effect` Tool
 * node bound to the run's `tag` (its requestId), so effects can be matched to runs.
 */
import type { Json, JsonObject } from '@flowline/graph';

export type Shape = 'retry' | 'pause' | 'fanout' | 'cancel' | 'llm' | 'slow';
/** The shapes a workload mixes by default; `llm` only when an LLM worker runs. `slow` (a 5 s tool call a fault can land in) is mixed in on request. */
export const SHAPES: readonly Shape[] = ['retry', 'pause', 'fanout', 'cancel', 'llm'];

/** Attempts per Tool node: kills interrupt attempts, so leave room beyond test_fail's one failure. */
const MAX_ATTEMPTS = 8;

const effect = (key: string): Json => ({
  key,
  kind: 'Tool',
  maxAttempts: MAX_ATTEMPTS,
  config: { toolName: 'chaos_effect', arguments: { node: key }, argumentBindings: { tag: 'run.input.tag' } },
});

const chain = (keys: string[]): Json[] => keys.slice(1).map((to, i) => ({ key: `e${i + 1}`, from: keys[i]!, to }));

/** Keys of the `chaos_effect` nodes of each shape. */
export const EFFECT_NODES: Record<Shape, readonly string[]> = {
  retry: ['fx_a'],
  pause: ['fx_a', 'fx_b'],
  fanout: ['fx_1', 'fx_2', 'fx_3', 'fx_4'],
  cancel: ['fx_a', 'fx_b'],
  llm: ['fx_a'],
  slow: ['fx_a'],
};

/** The graph document of one shape. */
export function graphOf(shape: Shape): JsonObject {
  const start: Json = { key: 'start', kind: 'Start' };
  const end: Json = { key: 'end', kind: 'End', config: { outcome: 'done' } };
  switch (shape) {
    case 'retry': {
      // fails its first attempt, then succeeds; then one effect
      const flaky: Json = { key: 'flaky', kind: 'Tool', maxAttempts: MAX_ATTEMPTS, config: { toolName: 'test_fail', arguments: { untilAttempt: 2 } } };
      return { schemaVersion: 1, nodes: [start, flaky, effect('fx_a'), end], edges: chain(['start', 'flaky', 'fx_a', 'end']) };
    }
    case 'pause': {
      // effect, then a person decides: Approve runs a second effect, Reject ends at once
      const review: Json = { key: 'review', kind: 'Pause', config: { prompt: 'Go on?', allowedDecisions: ['Approve', 'Reject'], requireComment: false } };
      return {
        schemaVersion: 1,
        nodes: [start, effect('fx_a'), review, effect('fx_b'), { ...(end as JsonObject), joinPolicy: 'Any' }],
        edges: [
          { key: 'e1', from: 'start', to: 'fx_a' },
          { key: 'e2', from: 'fx_a', to: 'review' },
          { key: 'e3', from: 'review', to: 'fx_b', sourceHandle: 'Approve', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
          { key: 'e4', from: 'review', to: 'end', sourceHandle: 'Reject', condition: { path: 'output.decision', op: 'Eq', value: 'Reject' } },
          { key: 'e5', from: 'fx_b', to: 'end' },
        ],
      };
    }
    case 'fanout': {
      const fan: Json = { key: 'fan', kind: 'Parallel', config: {} };
      const merge: Json = { key: 'merge', kind: 'Join', joinPolicy: 'All', config: {} };
      const branches = EFFECT_NODES.fanout;
      return {
        schemaVersion: 1,
        nodes: [start, fan, ...branches.map(effect), merge, end],
        edges: [
          { key: 'e0', from: 'start', to: 'fan' },
          ...branches.flatMap((b, i): Json[] => [
            { key: `eo${i}`, from: 'fan', to: b },
            { key: `ei${i}`, from: b, to: 'merge' },
          ]),
          { key: 'e9', from: 'merge', to: 'end' },
        ],
      };
    }
    case 'llm': {
      // one model call on the LLM lane (fake OpenAI-compatible server), then an effect
      const ask: Json = { key: 'ask', kind: 'LlmCall', maxAttempts: MAX_ATTEMPTS, config: { prompt: 'Say ok.' } };
      return { schemaVersion: 1, nodes: [start, ask, effect('fx_a'), end], edges: chain(['start', 'ask', 'fx_a', 'end']) };
    }
    case 'slow': {
      // an effect, then a 5 s tool call: long enough for a kill -9 to land inside it even when
      // the harness sees the node Running late (its row turns Running a tick after the worker
      // took the job; at 2 s a loaded CI host sometimes killed the worker after the call returned)
      const slow: Json = { key: 'slow', kind: 'Tool', maxAttempts: MAX_ATTEMPTS, config: { toolName: 'wait', arguments: { ms: 5000 } } };
      return { schemaVersion: 1, nodes: [start, effect('fx_a'), slow, end], edges: chain(['start', 'fx_a', 'slow', 'end']) };
    }
    case 'cancel': {
      // a slow step the harness cancels while it runs (or just before/after)
      const slow: Json = { key: 'slow', kind: 'Tool', maxAttempts: MAX_ATTEMPTS, config: { toolName: 'wait', arguments: { ms: 1500 } } };
      return { schemaVersion: 1, nodes: [start, effect('fx_a'), slow, effect('fx_b'), end], edges: chain(['start', 'fx_a', 'slow', 'fx_b', 'end']) };
    }
  }
}
