/**
 * Steering a live LlmCall end to end (CONTRACT §5, §8): the API records the steer, the
 * dispatcher applies it (node back to Pending on the same attempt, old flight cancelled),
 * the LLM worker aborts the held HTTP request and re-runs the node with the operator's
 * words in a final `## Operator steering` section. A whole cluster of child processes
 * against the fake OpenAI-compatible server; real Postgres and Redis.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, waitFor, type FakeLlmRequest, type FakeLlmServer, nodeOf } from '@flowline/testing';
import { messageText } from './helpers';
import { startLlmCluster, type LlmCluster } from './llm-cluster';

const STEERING = '## Operator steering';

/** Start → `ask` (LlmCall; the run input's `tag` bound into its prompt) → End. */
const graph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'ask', kind: 'LlmCall', config: { prompt: 'Write a haiku.', inputBindings: { tag: 'run.input.tag' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'ask' },
    { key: 'e2', from: 'ask', to: 'end' },
  ],
};

interface RunEvent {
  seq: number;
  kind: string;
  nodeKey: string | null;
  detail: Record<string, unknown>;
}

describe('steering an LlmCall held in flight by the model server', () => {
  let fake: FakeLlmServer;
  let c: LlmCluster;
  let definitionId: string;

  beforeAll(async () => {
    fake = await startFakeLlm();
    // An unsteered prompt streams a little, then hangs until the client goes away; a steered one answers.
    fake.setHandler((req) => (messageText(req.body, 'user').includes(STEERING) ? { content: 'a haiku about the sea' } : { hang: true, content: 'thinking' }));
    c = await startLlmCluster(fake);
    definitionId = await c.api.createDefinition('steer-llm', graph);
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await fake?.close();
  });

  async function send(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${c.api.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  }

  async function events(runId: string): Promise<RunEvent[]> {
    const res = await fetch(`${c.api.baseUrl}/v1/runs/${runId}/events?limit=1000`);
    return ((await res.json()) as { events: RunEvent[] }).events;
  }

  /** The fake's requests of one run (its tag is in the prompt's data block). */
  const requestsOf = (tag: string): FakeLlmRequest[] => fake.requests.filter((r) => messageText(r.body, 'user').includes(tag));

  /** Starts a run and waits until its `ask` node is Running with its request held by the fake. */
  async function heldRun(): Promise<{ runId: string; tag: string }> {
    const tag = `tag-${randomUUID()}`;
    const runId = await c.api.startRun(definitionId, { tag });
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'ask')?.status === 'Running', 30_000, 'ask Running');
    await waitFor(() => requestsOf(tag).length === 1 && !requestsOf(tag)[0]!.aborted, { timeoutMs: 15_000, description: 'the request is held' });
    return { runId, tag };
  }

  it('aborts the held request and re-runs the node on the same attempt with the steering section, and the run completes', async () => {
    const { runId, tag } = await heldRun();
    const message = 'Make it about the sea.';
    const operationId = randomUUID();
    expect((await send('POST', `/v1/runs/${runId}/nodes/ask/steer`, { operationId, message })).status).toBe(202);

    const done = await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 30_000, 'run completed');
    expect(nodeOf(done, 'ask')).toMatchObject({ status: 'Succeeded', attempt: 1 });

    const evs = await events(runId);
    const steered = evs.filter((e) => e.nodeKey === 'ask' && e.kind === 'node.steered');
    expect(steered).toHaveLength(1);
    expect(steered[0]!.detail).toMatchObject({ operationId, message, attempt: 1 });
    expect(evs.filter((e) => e.nodeKey === 'ask' && e.kind === 'node.retried')).toEqual([]);
    // both flights ran attempt 1: the steer re-spent the same attempt
    expect(evs.filter((e) => e.nodeKey === 'ask' && e.kind === 'node.started').map((e) => e.detail.attempt)).toEqual([1, 1]);

    // The old flight's HTTP request was aborted; the re-run's prompt ends with the steering section.
    await waitFor(() => requestsOf(tag)[0]!.aborted, { timeoutMs: 15_000, description: 'the first request aborted' });
    const requests = requestsOf(tag);
    expect(requests).toHaveLength(2);
    expect(messageText(requests[0]!.body, 'user')).not.toContain(STEERING);
    expect(messageText(requests[1]!.body, 'user').endsWith(`${STEERING}\n1. ${message}`)).toBe(true);
    expect(requests[1]!.aborted).toBe(false);

    const node = (await (await fetch(`${c.api.baseUrl}/v1/runs/${runId}/nodes/ask`)).json()) as {
      output: { status: string; attempt: number; output: { text: string } };
      steering: { operationId: string; applied: boolean; attempt: number }[];
    };
    expect(node.output).toMatchObject({ status: 'succeeded', attempt: 1, output: { text: 'a haiku about the sea' } });
    expect(node.steering).toMatchObject([{ operationId, applied: true, attempt: 1 }]);

    // A steer once the node settled is refused by the API's guarded append: nothing recorded, nothing re-run.
    const late = await send('POST', `/v1/runs/${runId}/nodes/ask/steer`, { operationId: randomUUID(), message: 'too late' });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'NodeStateConflict' } } });
    expect((await events(runId)).filter((e) => e.kind === 'node.steered')).toHaveLength(1);
    expect(requestsOf(tag)).toHaveLength(2);
  }, 60_000);

  it('records node.steer-ignored for a steer the dispatcher judges only after the run went Cancelling', async () => {
    const { runId, tag } = await heldRun();
    const dispatcher = c.cluster.processes.get(c.dispatcher)!.proc;
    const operationId = randomUUID();
    // Frozen, the dispatcher judges both intents in one tick: the steer is recorded while the node
    // runs, and by the time it is judged the run is Cancelling, so it is ignored, never applied.
    dispatcher.kill('SIGSTOP');
    try {
      expect((await send('POST', `/v1/runs/${runId}/nodes/ask/steer`, { operationId, message: 'never applied' })).status).toBe(202);
      expect((await send('POST', `/v1/runs/${runId}/cancel`, { reason: 'operator' })).status).toBe(202);
    } finally {
      dispatcher.kill('SIGCONT');
    }
    await c.api.waitForRun(runId, (v) => v.run.status === 'Cancelled', 30_000, 'run cancelled');
    const evs = (await events(runId)).filter((e) => e.nodeKey === 'ask');
    const ignored = evs.filter((e) => e.kind === 'node.steer-ignored');
    expect(ignored).toHaveLength(1);
    expect(ignored[0]!.detail).toMatchObject({ operationId, message: 'never applied', attempt: 1 });
    expect(evs.map((e) => e.kind)).not.toContain('node.steered');
    // the cancel aborted the only flight; no steered re-run reached the model server
    await waitFor(() => requestsOf(tag)[0]!.aborted, { timeoutMs: 15_000, description: 'the request aborted' });
    expect(requestsOf(tag)).toHaveLength(1);
  }, 60_000);
});
