import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { JsonObject, NodeKind, WorkItem } from '@flowline/graph';
import type { LaneQueues, WorkReturn } from '@flowline/queue';
import { spawnService, waitFor, type FakeLlmServer, type FakeReply, type ServiceProcess } from '@flowline/testing';

/** An llm-lane work item with sensible defaults. */
export function llmItem(kind: NodeKind, config: JsonObject, overrides: Partial<WorkItem> = {}): WorkItem {
  return {
    lane: 'llm',
    runId: `run-${randomUUID()}`,
    nodeKey: 'llm1',
    kind,
    invocationId: randomUUID(),
    attempt: 1,
    config,
    input: {
      run: { input: { city: 'Oslo' } },
      upstream: { start: { status: 'succeeded', attempt: 1, branch: null, output: { input: { city: 'Oslo' } } } },
      input: { status: 'succeeded', attempt: 1, branch: null, output: { input: { city: 'Oslo' } } },
    },
    deadlineAt: Date.now() + 30_000,
    steering: [],
    outputSchema: null,
    ...overrides,
  };
}

/** Waits until the job of `invocationId` finished and returns its return value. */
export async function returnValueOf(queues: LaneQueues, invocationId: string, timeoutMs = 15_000): Promise<WorkReturn> {
  return waitFor(
    async () => {
      const job = await queues.llm.getJob(invocationId);
      if (job?.failedReason) throw new Error(`job failed: ${job.failedReason}`);
      return job?.finishedOn ? (job.returnvalue as WorkReturn) : null;
    },
    { timeoutMs, description: `job ${invocationId} to finish` },
  );
}

/** Routes fake-server replies by the request's model, so tests pinning distinct models never share a queue. */
export function scriptByModel(fake: FakeLlmServer): (model: string, ...replies: FakeReply[]) => void {
  const queues = new Map<string, FakeReply[]>();
  fake.setHandler((req) => {
    const model = typeof req.body.model === 'string' ? req.body.model : '';
    const reply = queues.get(model)?.shift();
    return reply ?? { content: 'unscripted' };
  });
  return (model, ...replies) => {
    const list = queues.get(model) ?? [];
    list.push(...replies);
    queues.set(model, list);
  };
}

/** The requests the fake received for `model`. */
export function requestsFor(fake: FakeLlmServer, model: string) {
  return fake.requests.filter((r) => r.body.model === model);
}

/** The text of the message of `role` at position `index` (negative from the end) of a request. */
export function messageText(body: Record<string, unknown>, role: string, index = -1): string {
  const messages = (body.messages as { role: string; content: unknown }[]).filter((m) => m.role === role);
  const m = messages.at(index);
  return typeof m?.content === 'string' ? m.content : '';
}

const serviceDir = fileURLToPath(new URL('..', import.meta.url));

/** Spawns worker-llm with `env` over the test environment; `ready` waits for its ready line. */
export function spawnLlmWorker(env: Record<string, string>, ready = true): Promise<ServiceProcess> {
  return spawnService({ cwd: serviceDir, env, readyText: ready ? 'worker-llm ready' : null });
}
