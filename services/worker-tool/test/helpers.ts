import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { JsonObject, WorkItem } from '@flowline/graph';
import type { LaneQueues, WorkReturn } from '@flowline/queue';
import { spawnService, waitFor, type ServiceProcess } from '@flowline/testing';

/** A Tool work item with sensible defaults. */
export function toolItem(config: JsonObject, overrides: Partial<WorkItem> = {}): WorkItem {
  return {
    lane: 'tool',
    runId: `run-${randomUUID()}`,
    nodeKey: 'tool1',
    kind: 'Tool',
    invocationId: randomUUID(),
    attempt: 1,
    config,
    input: {
      run: { input: { city: 'Oslo' } },
      upstream: {},
      input: { status: 'succeeded', attempt: 1, branch: null, output: { q: 'from-upstream' } },
    },
    deadlineAt: Date.now() + 30_000,
    steering: [],
    outputSchema: null,
    ...overrides,
  };
}

/** Waits until the job of `invocationId` finished and returns its return value. */
export async function returnValueOf(queues: LaneQueues, invocationId: string, timeoutMs = 10_000): Promise<WorkReturn> {
  return waitFor(
    async () => {
      const job = await queues.tool.getJob(invocationId);
      if (job?.failedReason) throw new Error(`job failed: ${job.failedReason}`);
      return job?.finishedOn ? (job.returnvalue as WorkReturn) : null;
    },
    { timeoutMs, description: `job ${invocationId} to finish` },
  );
}

export const serviceDir = fileURLToPath(new URL('..', import.meta.url));

/** Spawns worker-tool with `env` over the test environment and waits for its ready line. */
export function spawnToolWorker(env: Record<string, string>): Promise<ServiceProcess> {
  return spawnService({ cwd: serviceDir, env, readyText: 'worker-tool ready', readyTimeoutMs: 20_000 });
}
