import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import pino from 'pino';
import { io as connectSocket, type Socket } from 'socket.io-client';
import { createTestDatabase, createTestRedis, waitFor, type TestDatabase, type TestRedis } from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { activityStreamKey, changeKindOf, LIVE_EVENTS, publishChangePings, runChangesChannel, type LiveEvent, type NodeActivity, type RunChangedPing } from '@flowline/queue';
import { createClient, LiveRequestError, type FlowlineClient, type RunChange } from '@flowline/client';
import { createApp } from '../src/app';
import { attachLive, DEFAULT_LIVE_OPTIONS, type LiveOptions, type LiveServer } from '../src/live';
import type { ApiLimits } from '../src/context';
import { KEYS, lineGraph, pauseGraph } from './harness';

const SHARD_COUNT = 8;
const TENANT_KEYS = new Map<string, string>([[KEYS.a, 'tenantA'], [KEYS.b, 'tenantB']]);

interface Replica {
  url: string;
  live: LiveServer;
  close(): Promise<void>;
}

let db: TestDatabase;
let tr: TestRedis;
let conn: Redis;
const replicas: Replica[] = [];
const clients: FlowlineClient[] = [];
const sockets: Socket[] = [];

/** One API replica: app + HTTP server + live channel, with its own Redis connections. */
async function startReplica(limits: Partial<ApiLimits> = {}, options: Partial<LiveOptions> = {}): Promise<Replica> {
  const redis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  const tools = await createToolRegistry({ testTools: true });
  const logger = pino({ level: 'silent' });
  const fullLimits: ApiLimits = { maxNodesPerDefinition: 200, maxRunInputBytes: 65_536, eventReplayLimit: 200, shardCount: SHARD_COUNT, streamPollMs: 50, maxSteersPerNode: 5, ...limits };
  const app = createApp({
    pool: db.pool,
    redis,
    apiKeys: TENANT_KEYS,
    limits: fullLimits,
    tools: { catalog: () => tools.catalog(), parserCatalog: () => tools.asParserCatalog() },
    queuePrefix: tr.prefix,
    logger,
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as HttpServer;
  if (!server.listening) await once(server, 'listening');
  const live = attachLive(server, {
    pool: db.pool,
    redis,
    apiKeys: TENANT_KEYS,
    queuePrefix: tr.prefix,
    eventReplayLimit: fullLimits.eventReplayLimit,
    options: { ...DEFAULT_LIVE_OPTIONS, ...options },
    logger,
  });
  await live.ready;
  const replica: Replica = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    live,
    async close() {
      await live.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      redis.disconnect();
    },
  };
  replicas.push(replica);
  return replica;
}

function client(r: Replica, apiKey: string = KEYS.a): FlowlineClient {
  const c = createClient({ baseUrl: r.url, apiKey });
  clients.push(c);
  return c;
}

const connected = (s: Socket) => (s.connected ? Promise.resolve() : new Promise<void>((resolve) => s.once('connect', () => resolve())));

function rawSocket(r: Replica, token: string | null = KEYS.a): Socket {
  const s = connectSocket(r.url, { path: '/socket.io', transports: ['websocket'], auth: token === null ? {} : { token }, reconnection: false });
  sockets.push(s);
  return s;
}

/** Commits events like a dispatcher (one transaction, last_seq bumped) and pings the highest seq after the commit. */
async function commitEvents(runId: string, kinds: string[], publisher: Redis = conn): Promise<number> {
  const c = await db.pool.connect();
  let last: number;
  try {
    await c.query('BEGIN');
    const head = await c.query<{ last_seq: number }>('SELECT last_seq FROM runs WHERE id = $1 FOR UPDATE', [runId]);
    const from = head.rows[0]!.last_seq + 1;
    last = from + kinds.length - 1;
    await c.query(
      `INSERT INTO events (run_id, seq, kind, node_key, detail) SELECT $1, $2::int + i - 1, k, NULL, '{}'::jsonb FROM unnest($3::text[]) WITH ORDINALITY AS t(k, i)`,
      [runId, from, kinds],
    );
    await c.query('UPDATE runs SET last_seq = $2 WHERE id = $1', [runId, last]);
    await c.query('COMMIT');
  } finally {
    c.release();
  }
  const ping: RunChangedPing = { runId, seq: last, kind: changeKindOf(kinds.at(-1)!) };
  await publishChangePings(publisher, [ping], tr.prefix);
  return last;
}

async function allEvents(c: FlowlineClient, runId: string): Promise<LiveEvent[]> {
  const out: LiveEvent[] = [];
  for (;;) {
    const page = await c.runs.events(runId, { afterSeq: out.at(-1)?.seq ?? 0 });
    out.push(...page.events);
    if (!page.truncated) return out;
  }
}

/** A run of tenant A that no dispatcher touches (no dispatcher runs on this prefix's shards until the last test). */
async function idleRun(c: FlowlineClient, graph: unknown = lineGraph()): Promise<string> {
  const def = await c.definitions.create({ name: `live-${randomUUID()}`, graph });
  return (await c.runs.start(def.id)).runId;
}

/** Records every change a subscription delivers. */
function recorder() {
  const changes: RunChange[] = [];
  return {
    changes,
    onChange: (c: RunChange) => void changes.push(c),
    seqs: () => changes.flatMap((c) => c.events.map((e) => e.seq)),
  };
}

/** True while the replica's live server holds a room (and so a change subscription) for the run. */
const isWatchedOn = (r: Replica, runId: string) => (r.live.io.of('/').adapter.rooms.get(`run:${runId}`)?.size ?? 0) > 0;

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

let A: Replica;
let B: Replica;
beforeAll(async () => {
  db = await createTestDatabase();
  tr = createTestRedis();
  conn = new Redis(tr.url, { maxRetriesPerRequest: 3 });
  A = await startReplica({ eventReplayLimit: 5 });
  B = await startReplica({ eventReplayLimit: 5 });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of sockets) s.disconnect();
  await Promise.allSettled(replicas.map((r) => r.close()));
  conn?.disconnect();
  await tr?.cleanup();
  await db?.drop();
});

describe('live channel handshake and refusals', () => {
  it('refuses a handshake without a known key', async () => {
    for (const token of [null, 'not-a-key']) {
      const s = rawSocket(A, token);
      const err = await new Promise<Error>((resolve) => s.once('connect_error', resolve));
      expect(err.message).toBe('Unauthorized');
    }
  });

  it('answers malformed payloads with a ValidationFailed ack and keeps serving the same socket', async () => {
    const s = rawSocket(A);
    await connected(s);
    const bad: Array<[string, unknown]> = [
      [LIVE_EVENTS.subscribeRun, null],
      [LIVE_EVENTS.subscribeRun, 'run'],
      [LIVE_EVENTS.subscribeRun, { runId: 5 }],
      [LIVE_EVENTS.subscribeRun, { runId: randomUUID(), afterSeq: -1 }],
      [LIVE_EVENTS.subscribeRun, { runId: randomUUID(), afterSeq: 1.5 }],
      [LIVE_EVENTS.subscribeRun, { runId: randomUUID(), extra: true }],
      [LIVE_EVENTS.unsubscribeRun, 42],
      [LIVE_EVENTS.streamNodeActivity, { runId: randomUUID() }],
    ];
    for (const [event, payload] of bad) {
      const ack = (await s.timeout(5000).emitWithAck(event, payload)) as { error: { code: string; message: string } };
      expect(ack.error.code, `${event} ${JSON.stringify(payload)}`).toBe('ValidationFailed');
      expect(ack.error.message.length).toBeGreaterThan(0);
    }
    // an event without an ack function cannot be answered and changes nothing
    s.emit(LIVE_EVENTS.subscribeRun, { runId: 'x' });
    const runId = await idleRun(client(A));
    const ack = (await s.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })) as { watermark: number };
    expect(ack.watermark).toBe(1);
    expect(s.connected).toBe(true);
  });

  it('refuses an unknown run, a malformed id and another tenant’s run with a NotFound ack', async () => {
    const runId = await idleRun(client(A));
    const other = rawSocket(B, KEYS.b);
    await connected(other);
    for (const id of [randomUUID(), 'not-a-uuid', runId]) {
      const ack = await other.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId: id, afterSeq: 0 });
      expect(ack).toEqual({ error: { code: 'NotFound', message: 'no such run' } });
    }
    // the refused subscriber is in no room: a ping of that run does not reach it
    let leaked = 0;
    other.on(LIVE_EVENTS.runChanged, () => leaked++);
    const mine = client(B).subscribeRun(runId, 0, () => undefined);
    await mine.ready;
    const seq = await commitEvents(runId, ['node.queued']);
    await waitFor(() => mine.highestPing() >= seq, { description: 'tenant A subscriber pinged' });
    expect(leaked).toBe(0);
    await expect(client(A, KEYS.b).subscribeRun(runId, 0, () => undefined).ready).rejects.toBeInstanceOf(LiveRequestError);
  });
});

describe('subscribe snapshot', () => {
  it('acks status, queued/running counts, pending decisions and inputs of the run and its children, and a truncated replay', async () => {
    const a = client(A);
    const runId = await idleRun(a, pauseGraph());
    await commitEvents(runId, ['run.started', 'node.queued', 'node.started', 'node.completed', 'node.queued', 'gate.requested', 'node.queued']);
    const childId = await idleRun(a);
    await db.pool.query(`UPDATE runs SET status = 'WaitingForApproval' WHERE id = $1`, [runId]);
    await db.pool.query(`UPDATE node_runs SET status = 'Queued' WHERE run_id = $1 AND node_key = 'start'`, [runId]);
    await db.pool.query(`UPDATE node_runs SET status = 'Running' WHERE run_id = $1 AND node_key = 'yes'`, [runId]);
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', pending_decision_kind = 'Approve' WHERE run_id = $1 AND node_key = 'gate'`, [runId]);
    await db.pool.query(`UPDATE runs SET parent_run_id = $1 WHERE id = $2`, [runId, childId]);
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', pending_decision_kind = 'Answer' WHERE run_id = $1 AND node_key = 'start'`, [childId]);
    await db.pool.query(`UPDATE node_runs SET status = 'WaitingForApproval', pending_decision_kind = 'Operator' WHERE run_id = $1 AND node_key = 'end'`, [childId]);

    const s = rawSocket(A);
    await connected(s);
    const snap = await s.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 1 });
    expect(snap).toMatchObject({
      status: 'WaitingForApproval',
      queued: 1,
      running: 1,
      pendingDecisions: [{ nodeKey: 'gate', runId }, { nodeKey: 'end', runId: childId }],
      pendingInputs: [{ nodeKey: 'start', runId: childId }],
      watermark: 6,
      replayTruncated: true,
    });
    expect(snap.events.map((e: LiveEvent) => e.seq)).toEqual([2, 3, 4, 5, 6]);
    expect(snap.events[0]).toMatchObject({ kind: 'run.started', nodeKey: null });
    const rest = await s.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 6 });
    expect(rest).toMatchObject({ watermark: 8, replayTruncated: false });
    expect(rest.events.map((e: LiveEvent) => e.seq)).toEqual([7, 8]);
    // a watermark from the future is clamped to the run's last seq
    expect(await s.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 99 })).toMatchObject({ watermark: 8, events: [] });
  });
});

describe('pings across replicas', () => {
  it('delivers pings committed and published through replica B to a subscriber on replica A, covering every committed seq', async () => {
    const b = client(B);
    const runId = await idleRun(b);
    const rec = recorder();
    const a = client(A);
    const sub = a.subscribeRun(runId, 0, rec.onChange);
    await sub.ready;
    const pings: number[] = [];
    a.live().socket.on(LIVE_EVENTS.runChanged, (p: RunChangedPing) => void (p.runId === runId && pings.push(p.seq)));
    const published: number[] = [];
    const bRedis = new Redis(tr.url, { maxRetriesPerRequest: 3 });
    try {
      for (let i = 0; i < 12; i++) published.push(await commitEvents(runId, i % 3 === 0 ? ['node.queued', 'node.started'] : ['node.completed'], bRedis));
    } finally {
      bRedis.disconnect();
    }
    const last = published.at(-1)!;
    await waitFor(() => sub.watermark() === last && sub.highestPing() === last, { description: 'caught up to the last commit' });
    // every event exactly once, in order, as the events route lists them
    expect(rec.seqs()).toEqual((await allEvents(b, runId)).map((e) => e.seq));
    expect(rec.seqs()).toEqual(range(1, last));
    // each ping names a commit's highest seq (merged: the highest of several); every commit is covered
    await waitFor(() => pings.includes(last), { description: 'last commit pinged' });
    expect(pings.every((seq) => published.includes(seq))).toBe(true);
    expect(published.every((seq) => pings.some((p) => p >= seq))).toBe(true);
    await sub.close();
  });

  it('costs a replica nothing for the commits of a run none of its sockets watches, from the last leave on (issue #19)', async () => {
    const runId = await idleRun(client(A));
    const onA = rawSocket(A);
    const onB = rawSocket(B);
    await Promise.all([connected(onA), connected(onB)]);
    const pinged: number[] = [];
    onA.on(LIVE_EVENTS.runChanged, (p: RunChangedPing) => void (p.runId === runId && pinged.push(p.seq)));
    const baseA = A.live.feed.received();
    const baseB = B.live.feed.received();
    // two sockets on A, none on B
    const second = rawSocket(A);
    await connected(second);
    for (const s of [onA, second]) expect(await s.timeout(5000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })).toMatchObject({ watermark: 1 });
    const first = await commitEvents(runId, ['run.started']);
    await waitFor(() => pinged.includes(first), { description: 'A relays the ping' });
    expect(A.live.feed.received() - baseA).toBe(1);
    expect(B.live.feed.received() - baseB).toBe(0);
    // one socket leaves: A still receives; the last leaves: A unsubscribes and stops receiving
    await second.timeout(5000).emitWithAck(LIVE_EVENTS.unsubscribeRun, { runId });
    const again = await commitEvents(runId, ['node.queued']);
    await waitFor(() => pinged.includes(again), { description: 'A relays the second ping' });
    await onA.timeout(5000).emitWithAck(LIVE_EVENTS.unsubscribeRun, { runId });
    expect(isWatchedOn(A, runId)).toBe(false);
    const subscribers = async () => ((await conn.pubsub('NUMSUB', runChangesChannel(runId, tr.prefix))) as [string, number])[1];
    await waitFor(async () => (await subscribers()) === 0, { description: 'A left the run channel' });
    await commitEvents(runId, ['node.started', 'node.completed']);
    await new Promise((r) => setTimeout(r, 200));
    expect(A.live.feed.received() - baseA).toBe(2);
    expect(B.live.feed.received() - baseB).toBe(0);
  });

  it('catches a reconnecting client up from its watermark without a gap or a duplicate', async () => {
    const a = client(A);
    const runId = await idleRun(a);
    const rec = recorder();
    const sub = a.subscribeRun(runId, 0, rec.onChange);
    await sub.ready;
    const first = await commitEvents(runId, ['run.started', 'node.queued']);
    await waitFor(() => sub.watermark() === first, { description: 'first batch seen' });
    const socket = a.live().socket;
    socket.disconnect();
    const missed = await commitEvents(runId, ['node.started', 'node.completed', 'node.queued', 'node.started', 'node.completed', 'node.queued', 'run.completed']);
    expect(sub.watermark()).toBe(first);
    socket.connect();
    await waitFor(() => sub.watermark() === missed, { description: 'caught up after reconnect' });
    expect(rec.seqs()).toEqual(range(1, missed));
    expect(rec.seqs()).toEqual((await allEvents(a, runId)).map((e) => e.seq));
    expect(rec.changes.filter((c) => c.snapshot).length).toBe(2);
  });

  it('holds a socket to its subscription cap under concurrent subscribes: the slot is reserved before any wait', async () => {
    const capped = await startReplica({}, { maxSubscriptionsPerSocket: 3, subscribeBurst: 100 });
    const c = client(capped);
    const def = await c.definitions.create({ name: `live-cap-${randomUUID()}`, graph: lineGraph() });
    const runIds = await Promise.all(Array.from({ length: 8 }, async () => (await c.runs.start(def.id)).runId));
    const s = rawSocket(capped);
    await connected(s);
    type Answer = { watermark?: number; error?: { code: string } };
    const subscribe = async (runId: string) => (await s.timeout(10_000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })) as Answer;
    // a refused or unknown run holds no slot once answered
    expect((await subscribe(randomUUID())).error?.code).toBe('NotFound');
    const acks = await Promise.all(runIds.map(subscribe));
    const admitted = runIds.filter((_, i) => acks[i]!.watermark === 1);
    expect(admitted).toHaveLength(3);
    expect(acks.filter((a) => a.error?.code === 'TooManyRequests')).toHaveLength(5);
    const serverSocket = capped.live.io.of('/').sockets.get(s.id!)!;
    expect(serverSocket.rooms.size - 1).toBe(3); // its own room besides the runs'
    // a subscription already held is answered again without a new slot; another run is refused
    expect((await subscribe(admitted[0]!)).watermark).toBe(1);
    const other = runIds.find((id) => !admitted.includes(id))!;
    expect((await subscribe(other)).error?.code).toBe('TooManyRequests');
    // leaving one frees its slot
    expect(await s.emitWithAck(LIVE_EVENTS.unsubscribeRun, { runId: admitted[0] })).toEqual({ ok: true });
    expect((await subscribe(other)).watermark).toBe(1);
  });

  it('admits a burst of subscriptions beyond the token bucket gradually, answering all of them', async () => {
    // 5 tokens/s: the eight asks reach the bucket well within one refill even on a loaded host
    const slow = await startReplica({}, { subscribeBurst: 2, subscribeRate: 5, subscribeMaxWaiting: 3 });
    const runId = await idleRun(client(slow));
    const s = rawSocket(slow);
    await connected(s);
    const acks = (await Promise.all(
      Array.from({ length: 8 }, () => s.timeout(10_000).emitWithAck(LIVE_EVENTS.subscribeRun, { runId, afterSeq: 0 })),
    )) as Array<{ watermark?: number; error?: { code: string; retryAfterMs?: number } }>;
    const admitted = acks.filter((x) => x.watermark === 1).length;
    const refused = acks.filter((x) => x.error?.code === 'TooManyRequests');
    expect(admitted).toBe(5); // burst 2 + 3 waiters
    expect(refused).toHaveLength(3);
    expect(refused.every((x) => (x.error!.retryAfterMs ?? 0) > 0)).toBe(true);
    // the client library retries a refused subscription after the advised delay
    const many = client(slow);
    const subs = Array.from({ length: 10 }, () => many.subscribeRun(runId, 0, () => undefined));
    expect((await Promise.all(subs.map((x) => x.ready))).every((snap) => snap.watermark === 1)).toBe(true);
  });
});

describe('SSE from the change feed', () => {
  it('sends frames for a pinged commit without polling the events table, and resumes from Last-Event-ID', async () => {
    // the safety re-read of this replica is 8 × 60 s: only the ping can deliver within the test
    const quiet = await startReplica({ streamPollMs: 60_000 });
    const a = client(quiet);
    const runId = await idleRun(a);
    const res = await fetch(`${quiet.url}/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}`, 'last-event-id': '0' } });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const frames = () =>
      text
        .split('\n\n')
        .slice(0, -1) // complete frames only
        .map((block) => Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])))
        .filter((f) => f.event === 'runChanged')
        .map((f) => {
          const ping = JSON.parse(f.data ?? '') as RunChangedPing;
          expect(f.id).toBe(String(ping.seq));
          return ping;
        });
    const readUntil = async (n: number) => {
      while (frames().length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
    };
    await readUntil(1);
    await commitEvents(runId, ['run.started', 'gate.requested']);
    await readUntil(3);
    await reader.cancel();
    expect(frames()).toEqual([
      { runId, seq: 1, kind: 'run' },
      { runId, seq: 2, kind: 'run' },
      { runId, seq: 3, kind: 'gate' },
    ]);
    await db.pool.query(`UPDATE runs SET status = 'Completed' WHERE id = $1`, [runId]);
    const resumed = await fetch(`${quiet.url}/v1/runs/${runId}/stream`, { headers: { authorization: `Bearer ${KEYS.a}`, 'last-event-id': '2' } });
    text = await resumed.text();
    expect(frames()).toEqual([{ runId, seq: 3, kind: 'gate' }]);
  });
});

describe('node activity', () => {
  it('streams the backlog then new entries of a Running node’s invocation until terminal, and refuses a node that is not Running', async () => {
    const a = client(A);
    const runId = await idleRun(a);
    await expect(a.live().streamNodeActivity(runId, 'start', () => undefined)).rejects.toMatchObject({ code: 'NodeStateConflict' });
    await expect(a.live().streamNodeActivity(runId, 'nope', () => undefined)).rejects.toMatchObject({ code: 'NotFound' });
    await expect(client(A, KEYS.b).live().streamNodeActivity(runId, 'start', () => undefined)).rejects.toMatchObject({ code: 'NotFound' });
    const invocationId = randomUUID();
    await db.pool.query(`UPDATE node_runs SET status = 'Running', invocation_id = $2 WHERE run_id = $1 AND node_key = 'start'`, [runId, invocationId]);
    const key = activityStreamKey(invocationId, tr.prefix);
    await conn.xadd(key, '*', 'type', 'phase', 'text', 'calling model');
    await conn.xadd(key, '*', 'type', 'content', 'text', 'Hel');
    const got: NodeActivity[] = [];
    const stream = await a.live().streamNodeActivity(runId, 'start', (x) => got.push(x));
    expect(stream.invocationId).toBe(invocationId);
    await waitFor(() => got.length === 2, { description: 'backlog' });
    await conn.xadd(key, '*', 'type', 'content', 'text', 'lo');
    await conn.xadd(key, '*', 'type', 'terminal');
    await waitFor(() => got.length === 4, { description: 'live entries' });
    expect(got).toEqual([
      { runId, nodeKey: 'start', invocationId, type: 'phase', offset: 0, text: 'calling model' },
      { runId, nodeKey: 'start', invocationId, type: 'content', offset: 1, text: 'Hel' },
      { runId, nodeKey: 'start', invocationId, type: 'content', offset: 2, text: 'lo' },
      { runId, nodeKey: 'start', invocationId, type: 'terminal', offset: 3 },
    ]);
  });
});
