/** Graph documents the end-to-end tests submit through the API. */
import type { Json, JsonObject } from '@flowline/graph';
import { canonicalEightWithEcho } from '@flowline/graph/fixtures';

/**
 * The canonical eight-node graph with its Agent replaced by an `echo` Tool: the run
 * input's `requiresReview` picks the branch (Pause `review`, or Tool `lookup` reading
 * `notes.md` under TOOL_FILES_ROOT).
 */
export function canonicalWithTool(): JsonObject {
  const doc = canonicalEightWithEcho();
  const nodes = doc.nodes as JsonObject[];
  const at = (key: string) => nodes.find((n) => n.key === key)!;
  at('analyze').config = { toolName: 'echo', argumentBindings: { requiresReview: 'run.input.requiresReview' } };
  at('check').config = { path: 'output.result.requiresReview' };
  at('lookup').config = { toolName: 'read_file', arguments: { path: 'notes.md' } };
  return doc;
}

/**
 * A version move for the migration tests: `before` is start → p → q → end (two Pauses);
 * `after` removes q and adds `after` (an echo Tool) behind p, so a run parked on p can move
 * (and completes through `after`) while a run parked on q cannot (q is gone). `label` tells
 * otherwise equal `before` versions apart.
 */
export function pauseMigrationPair(label = 'before'): { before: JsonObject; after: JsonObject } {
  const pause = (key: string): Json => ({ key, kind: 'Pause', config: { prompt: `${key}?`, allowedDecisions: ['Approve'] } });
  const end: Json = { key: 'end', kind: 'End', config: { outcome: 'done' } };
  return {
    before: {
      nodes: [{ key: 'start', kind: 'Start', label }, pause('p'), pause('q'), end],
      edges: [{ key: 'e1', from: 'start', to: 'p' }, { key: 'e2', from: 'p', to: 'q' }, { key: 'e3', from: 'q', to: 'end' }],
    },
    after: {
      nodes: [{ key: 'start', kind: 'Start' }, pause('p'), { key: 'after', kind: 'Tool', config: { toolName: 'echo', arguments: { shipped: true } } }, end],
      edges: [{ key: 'e1', from: 'start', to: 'p' }, { key: 'e2b', from: 'p', to: 'after' }, { key: 'e3', from: 'after', to: 'end' }],
    },
  };
}

/** Start → Tool(wait `ms`, then echo) → End: a run with one long in-flight job. */
export function waitThenEcho(ms: number, maxAttempts = 3): JsonObject {
  const nodes: Json[] = [
    { key: 'start', kind: 'Start' },
    { key: 'slow', kind: 'Tool', maxAttempts, config: { toolName: 'wait', arguments: { ms } } },
    { key: 'echo', kind: 'Tool', config: { toolName: 'echo', arguments: { done: true } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ];
  return {
    schemaVersion: 1,
    nodes,
    edges: [
      { key: 'e1', from: 'start', to: 'slow' },
      { key: 'e2', from: 'slow', to: 'echo' },
      { key: 'e3', from: 'echo', to: 'end' },
    ],
  };
}

/**
 * The JSON body of a valid `POST /v1/definitions` of about `bytes` bytes: a Start → (n − 2)
 * LlmCall → End fan-out, each LlmCall's prompt padded evenly. Heavy on every count at once
 * (body size, nodes, edges) — what a burst of large creates sends.
 */
export function heavyFanOutBody(n: number, bytes: number): string {
  const inner = n - 2;
  const body = (pad: number) =>
    JSON.stringify({
      name: 'burst',
      graph: {
        nodes: [
          { key: 'start', kind: 'Start' },
          ...Array.from({ length: inner }, (_, i) => ({ key: `n${i}`, kind: 'LlmCall', config: { prompt: 'p'.repeat(pad) } })),
          { key: 'end', kind: 'End', config: { outcome: 'done' } },
        ],
        edges: [
          ...Array.from({ length: inner }, (_, i) => ({ key: `a${i}`, from: 'start', to: `n${i}` })),
          ...Array.from({ length: inner }, (_, i) => ({ key: `b${i}`, from: `n${i}`, to: 'end' })),
        ],
      },
    });
  return body(Math.max(0, Math.floor((bytes - body(0).length) / inner)));
}

/** The model-side names of the memory MCP server's tools (`mcp__<server>__<tool>`), as a scripted model calls them. */
export const MEMORY_TOOL_CALLS = { create: 'mcp__memory__create_entities', delete: 'mcp__memory__delete_entities' } as const;

/**
 * Start → Agent(`model`, every tool of the deployment's `memory` MCP server, deleting entities
 * needs a person's approval) → End: the Agent whose scripted tool call parks on a person.
 */
export function memoryAgentWithApproval(model: string): JsonObject {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      {
        key: 'agent',
        kind: 'Agent',
        timeoutSeconds: 300,
        config: { instructions: 'Keep the memory tidy.', model, tools: ['mcp:memory/*'], toolApprovals: ['mcp:memory/delete_entities'], maxIterations: 10 },
      },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'agent' },
      { key: 'e2', from: 'agent', to: 'end' },
    ],
  };
}
