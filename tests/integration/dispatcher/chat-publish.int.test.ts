import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDefinition, listMessages, sendMessage } from '@flowline/db';
import type { Graph } from '@flowline/graph';
import { publishWake } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import { SHARD_COUNT, TENANT, createHarness, edge, node, runStatuses, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';


/**
 * Chat graph: Start → Tool(echo {reply}) → End(result = the echoed reply), the End without a
 * `publishToChat` flag (an End of a Chat graph publishes by default) unless one is given.
 */
function chatEcho(endFlag?: boolean): Graph {
  return {
    schemaVersion: 1,
    kind: 'Chat',
    chat: { acceptsAttachments: false, requireRerunConfirmation: true },
    inputSchema: null,
    outputSchema: null,
    nodes: [
      node('start', 'Start', {}),
      node('tool', 'Tool', { toolName: 'echo', arguments: { reply: 'pong' } }, 3),
      node('end', 'End', { outcome: 'answered', resultPath: 'input.output.result.reply', ...(endFlag === undefined ? {} : { publishToChat: endFlag }) }),
    ],
    edges: [edge('start', 'tool'), edge('tool', 'end')],
  };
}

async function insertChatDefinition(h: Harness, endFlag?: boolean): Promise<string> {
  const definitionId = randomUUID();
  const graph = chatEcho(endFlag);
  await insertDefinition(h.db.pool, {
    id: definitionId,
    tenantId: TENANT,
    name: `chat-echo-${definitionId}`,
    description: null,
    kind: 'Chat',
    graphJson: JSON.stringify(graph),
    planGraphJson: JSON.stringify(graph),
    graphHash: definitionId,
    nodeCount: graph.nodes.length,
  });
  return definitionId;
}

/** A send as the API makes it (without the wake). */
async function sendAs(h: Harness, definitionId: string, conversationId: string, text: string): Promise<{ runId: string; messageId: string }> {
  const graph = chatEcho();
  const r = await sendMessage(h.db.pool, {
    tenantId: TENANT,
    conversationId,
    definitionId,
    requestId: `${conversationId}:${text}`,
    text,
    attachments: [],
    shardCount: SHARD_COUNT,
    prepare: () => ({
      inputJson: JSON.stringify({ text }),
      nodes: graph.nodes.map((n) => ({ key: n.key, kind: n.kind, attemptLimit: n.maxAttempts })),
    }),
  });
  if (r.kind !== 'created') throw new Error(`send not created: ${r.kind}`);
  return { runId: r.runId, messageId: r.messageId };
}

describe('chat publishing through a dispatcher', () => {
  let h: Harness;
  let stopWorker: () => Promise<void>;
  let definitionId: string;

  beforeAll(async () => {
    h = await createHarness();
    stopWorker = await startToolWorker(h);
    await h.startDispatcher('d1');
    definitionId = await insertChatDefinition(h);
  });

  afterAll(async () => {
    await stopWorker?.();
    await h?.close();
  });

  /** A send as the API makes it, then its wake. */
  async function send(conversationId: string, text: string): Promise<{ runId: string; messageId: string }> {
    const r = await sendAs(h, definitionId, conversationId, text);
    await publishWake(h.conn, { runId: r.runId }, h.redis.prefix);
    return r;
  }

  /** Waits until the conversation holds `count` messages and answers them, oldest first. */
  async function messagesReach(conversationId: string, count: number, description: string) {
    await waitFor(async () => (await listMessages(h.db.pool, TENANT, conversationId, 50, null)).items.length === count, {
      timeoutMs: 10_000,
      description,
    });
    return (await listMessages(h.db.pool, TENANT, conversationId, 50, null)).items;
  }

  async function completed(runId: string): Promise<void> {
    await waitFor(async () => (await runStatuses(h.db, [runId])).get(runId) === 'Completed', {
      timeoutMs: 20_000,
      description: 'run completed',
    });
  }

  it('posts the answer of an End without a publishToChat flag into the conversation exactly once, with node.published {messageId} in the events', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const { runId, messageId } = await send(conversationId, 'ping');
    await completed(runId);
    const items = await messagesReach(conversationId, 2, 'assistant message published');
    expect(items.map((m) => ({ id: m.id, role: m.role, text: m.text, runId: m.runId, nodeKey: m.nodeKey }))).toEqual([
      { id: messageId, role: 'user', text: 'ping', runId, nodeKey: null },
      { id: expect.any(String), role: 'assistant', text: 'pong', runId, nodeKey: 'end' },
    ]);
    const events = await h.db.pool.query<{ seq: number; kind: string; node_key: string | null; detail: unknown }>(
      'select seq, kind, node_key, detail from events where run_id = $1 order by seq',
      [runId],
    );
    expect(events.rows.map((e) => e.seq)).toEqual(events.rows.map((_, i) => i + 1));
    const published = events.rows.filter((e) => e.kind === 'node.published');
    expect(published).toEqual([{ seq: expect.any(Number), kind: 'node.published', node_key: 'end', detail: { messageId: items[1]!.id } }]);
    const row = await h.db.pool.query(`select published_attempt from node_runs where run_id = $1 and node_key = 'end'`, [runId]);
    expect(row.rows[0]).toEqual({ published_attempt: 1 });
  });

  it('takes the next message once the bound run completed and publishes its answer too', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await send(conversationId, 'one');
    await completed(first.runId);
    // the publish follows the commit that completed the run
    await messagesReach(conversationId, 2, 'first answer published');
    const second = await send(conversationId, 'two');
    await completed(second.runId);
    const items = await messagesReach(conversationId, 4, 'both answers published');
    expect(items.map((m) => [m.role, m.runId])).toEqual([
      ['user', first.runId],
      ['assistant', first.runId],
      ['user', second.runId],
      ['assistant', second.runId],
    ]);
  });

  it('posts nothing from an End with publishToChat: false', async () => {
    const silentDefinition = await insertChatDefinition(h, false);
    const conversationId = `conv-${randomUUID()}`;
    const silent = await sendAs(h, silentDefinition, conversationId, 'hush');
    await publishWake(h.conn, { runId: silent.runId }, h.redis.prefix);
    await completed(silent.runId);
    // a publishing run completed after it on the same dispatcher: its publish pass ran after the silent run's
    const sentinelConversation = `conv-${randomUUID()}`;
    const sentinel = await send(sentinelConversation, 'after');
    await completed(sentinel.runId);
    await messagesReach(sentinelConversation, 2, 'sentinel answer published');
    const { items } = await listMessages(h.db.pool, TENANT, conversationId, 50, null);
    expect(items.map((m) => m.role)).toEqual(['user']);
    const published = await h.db.pool.query(`select 1 from events where run_id = $1 and kind = 'node.published'`, [silent.runId]);
    expect(published.rowCount).toBe(0);
    const row = await h.db.pool.query(`select publishes from node_runs where run_id = $1 and node_key = 'end'`, [silent.runId]);
    expect(row.rows[0]).toEqual({ publishes: false });
  });
});

describe('chat publish heal', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('publishes, on shard gain, an answer whose commit landed but whose publish pass was lost', async () => {
    const definitionId = await insertChatDefinition(h);
    const conversationId = `conv-${randomUUID()}`;
    const { runId } = await sendAs(h, definitionId, conversationId, 'lost');
    // the state a dispatcher leaves when it dies right after the commit that completed the run
    await h.db.pool.query(
      `UPDATE node_runs SET status = 'Succeeded', attempt = 1,
              output = jsonb_build_object('status', 'succeeded', 'attempt', 1, 'branch', null,
                                          'output', jsonb_build_object('outcome', 'answered', 'result', 'recovered'))
       WHERE run_id = $1`,
      [runId],
    );
    await h.db.pool.query(`UPDATE runs SET status = 'Completed', wake_at = NULL, finished_at = now() WHERE id = $1`, [runId]);
    await h.startDispatcher('d-heal');
    await waitFor(async () => (await listMessages(h.db.pool, TENANT, conversationId, 50, null)).items.length === 2, {
      timeoutMs: 10_000,
      description: 'lost answer published',
    });
    const { items } = await listMessages(h.db.pool, TENANT, conversationId, 50, null);
    expect(items[1]).toMatchObject({ role: 'assistant', text: 'recovered', nodeKey: 'end', runId });
    const published = await h.db.pool.query(`select node_key from events where run_id = $1 and kind = 'node.published'`, [runId]);
    expect(published.rows).toEqual([{ node_key: 'end' }]);
  });
});
