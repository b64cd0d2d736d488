/**
 * A span per node dispatch (tracing on only): each work item a committed plan queued gets a
 * PRODUCER span `dispatch <kind>`, a child of its run's stored `traceparent` (the API request
 * that created the run; a new trace when the run has none), and carries that span's context to
 * its BullMQ job as telemetry metadata, where the worker's process span continues it.
 * Tracing off: the work list only, no span objects.
 */
import type { LaneTelemetry } from '@flowline/queue';
import { contextOfTraceParent, contextWithSpan, SpanKind, startSpan, type Span } from '@flowline/runtime';
import type { CommittedPlan } from './tick';
import type { TenantWork } from './release-window';

export interface TracedWork {
  work: TenantWork[];
  /** ends the dispatch spans (once the work is handed to the window) */
  end(): void;
}

const NOTHING_TO_END = () => {};

/** The work `committed` queued, each item with its dispatch span's context when `telemetry` is given. */
export function dispatchWork(committed: readonly CommittedPlan[], telemetry: LaneTelemetry | undefined): TracedWork {
  const work: TenantWork[] = [];
  if (telemetry === undefined) {
    for (const c of committed) for (const item of c.plan.enqueue) work.push({ tenantId: c.snapshot.run.tenantId, priority: c.snapshot.run.priority, item });
    return { work, end: NOTHING_TO_END };
  }
  const spans: Span[] = [];
  for (const c of committed) {
    if (c.plan.enqueue.length === 0) continue;
    const parent = contextOfTraceParent(c.snapshot.traceParent ?? null);
    for (const item of c.plan.enqueue) {
      const span = startSpan(`dispatch ${item.kind}`, {
        kind: SpanKind.PRODUCER,
        parent,
        attributes: {
          'flowline.run.id': item.runId,
          'flowline.node.key': item.nodeKey,
          'flowline.invocation.id': item.invocationId,
          'flowline.node.attempt': item.attempt,
          'flowline.lane': item.lane,
        },
      });
      if (span === undefined) {
        work.push({ tenantId: c.snapshot.run.tenantId, priority: c.snapshot.run.priority, item });
        continue;
      }
      spans.push(span);
      work.push({ tenantId: c.snapshot.run.tenantId, priority: c.snapshot.run.priority, item, trace: telemetry.contextManager.getMetadata(contextWithSpan(span)) });
    }
  }
  return { work, end: () => spans.forEach((s) => s.end()) };
}
