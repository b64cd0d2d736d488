/** What the lane tests share: a valid Tool work item, a logger that says nothing, the lane's errors. */
import { randomUUID } from 'node:crypto';
import type { WorkItem } from '@flowline/graph';

/** A Tool work item of a fresh run and invocation, due in a minute; `over` replaces members. */
export function toolItem(over: Partial<WorkItem> = {}): WorkItem {
  return {
    lane: 'tool',
    runId: randomUUID(),
    nodeKey: 'fetch',
    kind: 'Tool',
    invocationId: randomUUID(),
    attempt: 1,
    config: {},
    input: { run: { input: null }, upstream: {}, input: null },
    deadlineAt: Date.now() + 60_000,
    steering: [],
    outputSchema: null,
    ...over,
  };
}

/** A lane logger that drops every line. */
export const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** The typed errors a test lane fails with. */
export const testLaneErrors = { cancelled: () => new Error('cancelled'), timeout: () => new Error('timeout'), interrupted: () => new Error('interrupted') };
