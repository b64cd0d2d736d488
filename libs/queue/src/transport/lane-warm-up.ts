/**
 * A lane worker's warm-up before it takes its first job: the per-job path (the payload read
 * from its wire form, the zod schemas behind it, the outcome report written back) run once on
 * a representative work item, so the first jobs after a start do not pay the schemas'
 * compilation and the code's first, unoptimised calls (a start's pickup would carry them).
 * Pure: no IO, nothing reported, no tool or model called.
 */
import type { Json, Lane, WorkItem, WorkOutcome } from '@flowline/graph';
import { parseWorkItem, toWire, workItemSchema, type Wire, type WorkReturn } from '../protocol';

/**
 * A work item of `lane` shaped like a real job's: an input document with a run input and
 * one upstream envelope, the kind the lane runs. Its ids name no run.
 */
export function warmUpItem(lane: Lane, now: number): WorkItem {
  const envelope = { status: 'succeeded' as const, attempt: 1, branch: null, output: { n: 1, text: 'warm-up' } };
  return {
    lane,
    runId: '00000000-0000-4000-8000-000000000000',
    nodeKey: 'warm-up',
    kind: lane === 'tool' ? 'Tool' : 'LlmCall',
    invocationId: '00000000-0000-4000-8000-000000000001',
    attempt: 1,
    config: lane === 'tool' ? { toolName: 'warm-up', arguments: { n: '{{ input.output.n }}', text: 'in {{ run.input.q }}' } } : { prompt: 'warm-up' },
    input: { run: { input: { q: 'warm-up' } }, upstream: { prev: envelope }, input: envelope },
    deadlineAt: now + 60_000,
    steering: [],
    outputSchema: null,
  };
}

/**
 * Runs the per-job protocol path once on {@link warmUpItem}, then `lane` (the lane's own
 * per-item preparation, e.g. resolving a Tool call's arguments) on the parsed item. Returns
 * the job's return value as the worker hands it to BullMQ (its wire form), so a caller (and
 * a test) can see the path ran end to end.
 * @throws when the representative item does not read back as a work item (a protocol bug)
 */
export function warmUpLane(laneKind: Lane, now: number, lane?: (item: WorkItem) => void): Wire<WorkReturn> {
  const item = warmUpItem(laneKind, now);
  const wire = toWire(item);
  // the hand-written fast path takes a real job; zod reads anything else: both are warmed
  const parsed = parseWorkItem(wire);
  workItemSchema.safeParse(item);
  if (!parsed.success) throw new Error('the warm-up work item does not read back as a work item');
  lane?.(parsed.data);
  const outcome: WorkOutcome = { ok: true, output: { echoed: parsed.data.input.run.input } as Json, startedAt: now, finishedAt: now };
  const ret: WorkReturn = { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId, outcome };
  return toWire(ret);
}
