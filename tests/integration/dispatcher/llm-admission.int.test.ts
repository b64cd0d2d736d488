/**
 * A node of the LLM lane waiting for provider capacity reads Queued, not Running: its
 * start is the worker's admission (job progress), not BullMQ's pickup. Real Postgres,
 * real Redis, the real LLM worker in-process against the fake OpenAI-compatible server.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCancel } from '@flowline/db';
import type { Graph, GraphNode, JsonObject } from '@flowline/graph';
import { closeLaneQueues, createLaneQueues, publishWake, type LaneQueues } from '@flowline/queue';
import { createToolRegistry } from '@flowline/tools';
import { startFakeLlm, waitFor, type FakeLlmServer } from '@flowline/testing';
// The real worker of the LLM lane, run in-process (tests only; services never import each other).
import { createLlmWorker, createProviderRegistry } from '../../../services/worker-llm/src/index';
import { createDispatchStore } from '../../../services/dispatcher/src/store';
import { PendingWork } from '../../../services/dispatcher/src/pending-work';
import { checkInflight } from '../../../services/dispatcher/src/inflight-check';
import { createHarness, runStatuses, SHARD_COUNT, TENANT, type Harness } from '../../../services/dispatcher/test/harness';

const node = (key: string, kind: GraphNode['kind'], config: JsonObject, timeoutSeconds: number | null = null, maxAttempts = 3): GraphNode => ({
  key,
  kind,
  label: key,
  joinPolicy: 'All',
  maxAttempts,
  timeoutSeconds,
  retryBackoff: { initialMs: 50, multiplier: 2, maxMs: 200 },
  onError: 'FailRun',
  inputSchema: null,
  outputSchema: null,
  position: null,
  config,
});

const edge = (from: string, to: string) => ({ key: `${from}-${to}`, from, to, label: null, condition: null, default: false });
const graphOf = (nodes: GraphNode[], edges: ReturnType<typeof edge>[]): Graph => ({
  schemaVersion: 1,
  kind: 'Standard',
  chat: null,
  inputSchema: null,
  outputSchema: null,
  nodes,
  edges,
});

/** Start → two LlmCall nodes `a` and `b` side by side (same provider/model) → End. */
function twoCalls(): Graph {
  return graphOf(
    [node('start', 'Start', {}), node('a', 'LlmCall', { prompt: 'first' }), node('b', 'LlmCall', { prompt: 'second' }), node('end', 'End', { outcome: 'done' })],
    [edge('start', 'a'), edge('start', 'b'), edge('a', 'end'), edge('b', 'end')],
  );
}

/** Start → LlmCall `a` (one attempt) → End. */
function oneCall(timeoutSeconds: number | null): Graph {
  return graphOf(
    [node('start', 'Start', {}), node('a', 'LlmCall', { prompt: 'only' }, timeoutSeconds, 1), node('end', 'End', { outcome: 'done' })],
    [edge('start', 'a'), edge('a', 'end')],
  );
}

interface Row {
  node_key: string;
  status: string;
  attempt: number;
  invocation_id: string | null;
  started_at: Date | null;
  failure_class: string | null;
  reason: string | null;
}

async function rows(h: Harness, runId: string): Promise<Map<string, Row>> {
  const r = await h.db.pool.query<Row>(
    `select node_key, status, attempt, invocation_id, started_at, failure_class, reason from node_runs where run_id = $1 and node_key in ('a', 'b')`,
    [runId],
  );
  return new Map(r.rows.map((x) => [x.node_key, x]));
}

async function eventKinds(h: Harness, runId: string, nodeKey: string): Promise<string[]> {
  const r = await h.db.pool.query<{ kind: string }>('select kind from events where run_id = $1 and node_key = $2 order by seq', [runId, nodeKey]);
  return r.rows.map((x) => x.kind);
}

describe('an LLM node waiting for provider capacity', () => {
  let h: Harness;
  let fake: FakeLlmServer;
  let connection: Redis;
  let queues: LaneQueues;
  let stopWorker: () => Promise<void>;
  /** each held request's release; a request answers once released */
  const held: (() => void)[] = [];

  beforeAll(async () => {
    h = await createHarness();
    fake = await startFakeLlm();
    fake.setHandler(
      (req) =>
        new Promise((resolve) => {
          held.push(() => resolve({ content: `answer ${req.index}` }));
        }),
    );
    connection = new Redis(h.redis.url, { maxRetriesPerRequest: null });
    queues = createLaneQueues(connection, h.redis.prefix);
    const worker = createLlmWorker({
      redis: connection,
      // a provider limit of 1 shared by every call of the default provider/model
      providers: createProviderRegistry({ baseUrl: fake.url, defaultModel: 'one-at-a-time', maxConcurrentCalls: 1 }),
      tools: await createToolRegistry({}),
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'warn' }),
      prefix: h.redis.prefix,
      concurrency: 4,
      shutdownGraceMs: 500,
    });
    await worker.start();
    stopWorker = () => worker.stop();
    // the in-flight check runs on every sweep, so it sees the waiting job many times
    await h.startDispatcher('d1', { INFLIGHT_CHECK_EVERY_SWEEPS: '1' });
  });

  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await stopWorker?.();
    await closeLaneQueues(queues);
    connection?.disconnect();
    await fake?.close();
    await h?.close();
  });

  /** Starts a run and waits until one node holds the slot (Running, its request held) and the other's job waits for capacity. */
  async function oneHoldsOneWaits(graph: Graph): Promise<{ runId: string; holder: Row; waiter: Row }> {
    const [runId] = await h.createRuns(graph, [{}]);
    return waitFor(
      async () => {
        const r = await rows(h, runId!);
        const holder = [...r.values()].find((x) => x.status === 'Running');
        const waiter = [...r.values()].find((x) => x !== holder);
        if (!holder || !waiter?.invocation_id || fake.inFlight() !== 1) return null;
        const job = await queues.llm.getJob(waiter.invocation_id);
        const phase = (job?.progress as { phase?: string } | undefined)?.phase;
        return phase === 'waiting-for-capacity' ? { runId: runId!, holder, waiter } : null;
      },
      { timeoutMs: 15_000, description: 'one node holds the provider slot, the other waits for it' },
    );
  }

  it('reads Queued while the other node holds the only slot, then Running once admitted, then Succeeded, both on attempt 1', async () => {
    const before = fake.requests.length;
    const { runId, holder, waiter } = await oneHoldsOneWaits(twoCalls());
    expect(holder.attempt).toBe(1);

    // The waiter's job is taken by a live worker (active, lock held) but not admitted.
    expect(await queues.llm.getJobState(waiter.invocation_id!)).toBe('active');
    const now = await rows(h, runId);
    expect(now.get(waiter.node_key)).toMatchObject({ status: 'Queued', attempt: 1, started_at: null });
    expect(await eventKinds(h, runId, waiter.node_key)).not.toContain('node.started');

    // The in-flight check neither starts the waiting job nor takes it for lost.
    const store = createDispatchStore(h.db.pool, { dispatcherId: 'probe', shardCount: SHARD_COUNT, leaseMs: 1500, maxConcurrentRuns: 1000 });
    const pending = new PendingWork();
    const enqueued: string[] = [];
    const healed = await checkInflight(
      {
        store,
        redis: connection,
        prefix: h.redis.prefix,
        pending,
        enqueue: async (work) => void enqueued.push(...work.map((w) => w.item.invocationId)),
        heldAmong: async () => new Set<string>(),
        defaultTimeoutMs: 60_000,
        log: pino({ level: 'silent' }),
      },
      Array.from({ length: SHARD_COUNT }, (_, i) => i),
    );
    expect(healed).toBe(0);
    expect(enqueued).toEqual([]);
    const [snapshot] = await store.loadSnapshots([runId]);
    expect(pending.attach(snapshot!).started).toEqual([]);
    expect(fake.requests.length - before).toBe(1);

    // The holder's answer frees the slot: the waiter is admitted, runs, succeeds.
    const releasedAt = Date.now();
    held.shift()!();
    await waitFor(() => fake.inFlight() === 1 && held.length === 1, { timeoutMs: 15_000, description: 'the waiter reached the provider' });
    const running = await waitFor(
      async () => {
        const w = (await rows(h, runId)).get(waiter.node_key)!;
        return w.status === 'Running' ? w : null;
      },
      { timeoutMs: 15_000, description: 'the waiter reads Running' },
    );
    // it started at its admission, which could only follow the holder's answer
    expect(running.started_at!.getTime()).toBeGreaterThanOrEqual(releasedAt);
    held.shift()!();
    await waitFor(async () => (await runStatuses(h.db, [runId])).get(runId) === 'Completed', { timeoutMs: 15_000, description: 'run completed' });

    const done = await rows(h, runId);
    for (const key of ['a', 'b']) {
      expect(done.get(key)).toMatchObject({ status: 'Succeeded', attempt: 1 });
      const kinds = await eventKinds(h, runId, key);
      expect(kinds.filter((k) => k === 'node.started')).toHaveLength(1);
      expect(kinds).not.toContain('node.retried');
      expect(kinds).not.toContain('node.interrupted');
    }
    expect(fake.requests.length - before).toBe(2);
  });

  /** A lease nobody renews or releases, holding the only slot (as a call on another replica would). */
  async function occupySlot(): Promise<() => Promise<void>> {
    const key = `${h.redis.prefix}:llm:slots:default/one-at-a-time`;
    await connection.zadd(key, Date.now() + 600_000, 'elsewhere');
    return async () => void (await connection.zrem(key, 'elsewhere'));
  }

  /** Starts a one-LlmCall run and waits until its job waits for capacity. */
  async function waiting(timeoutSeconds: number | null): Promise<{ runId: string; invocationId: string }> {
    const [runId] = await h.createRuns(oneCall(timeoutSeconds), [{}]);
    return waitFor(
      async () => {
        const a = (await rows(h, runId!)).get('a');
        if (!a?.invocation_id) return null;
        const job = await queues.llm.getJob(a.invocation_id);
        return (job?.progress as { phase?: string } | undefined)?.phase === 'waiting-for-capacity' ? { runId: runId!, invocationId: a.invocation_id } : null;
      },
      { timeoutMs: 15_000, description: 'the node waits for capacity' },
    );
  }

  it('aborts a waiting node when the run is cancelled, without it ever reaching the provider', async () => {
    const free = await occupySlot();
    const before = fake.requests.length;
    try {
      const { runId, invocationId } = await waiting(null);
      expect((await rows(h, runId)).get('a')).toMatchObject({ status: 'Queued', attempt: 1 });
      expect((await requestCancel(h.db.pool, TENANT, runId, 'operator cancel'))?.outcome).toBe('cancelling');
      await publishWake(connection, { runId }, h.redis.prefix);
      // the cancel channel aborts the job's admission wait: it ends Cancelled on its own
      const ret = await waitFor(
        async () => {
          const job = await queues.llm.getJob(invocationId);
          return job?.finishedOn ? (job.returnvalue as { outcome: { ok: boolean; failureClass?: string; startedAt: number | null } }) : null;
        },
        { timeoutMs: 15_000, description: 'the waiting job finished' },
      );
      expect(ret.outcome).toMatchObject({ ok: false, failureClass: 'Cancelled', startedAt: null });
      await waitFor(async () => (await runStatuses(h.db, [runId])).get(runId) === 'Cancelled', { timeoutMs: 15_000, description: 'run cancelled' });
      expect(fake.requests.length).toBe(before);
    } finally {
      await free();
    }
  });

  it('fails a node Timeout when its deadline passes while it waits for capacity', async () => {
    const free = await occupySlot();
    const before = fake.requests.length;
    try {
      const { runId } = await waiting(1);
      await waitFor(async () => (await runStatuses(h.db, [runId])).get(runId) === 'Failed', { timeoutMs: 15_000, description: 'run failed' });
      // the planner's deadline or the worker's own timer, whichever is first, ends the attempt
      const a = (await rows(h, runId)).get('a')!;
      expect(a).toMatchObject({ status: 'Failed', attempt: 1 });
      expect(a.reason).toMatch(/deadline/);
      expect(await eventKinds(h, runId, 'a')).not.toContain('node.retried');
      expect(fake.requests.length).toBe(before);
    } finally {
      await free();
    }
  });
});
