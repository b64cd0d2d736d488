/**
 * SQL for conversations (CONTRACT §5 chat routes): a message send that starts a run bound
 * to the conversation (one live run per conversation, idempotent by requestId), the
 * message and bound-run reads, and the publish outbox write the dispatcher performs after
 * a tick made a `publishToChat` node Succeeded. Every read is tenant-scoped.
 */
import type { Pool } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson } from '@flowline/graph';
import { exactJson } from './definitions';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetPosition } from './keyset-cursor';
import { createRun, type DefinitionForRun, type RunSeed } from './run-create';
import { openJson, openJsonText, openText, sealJsonText, sealText, type Sealed } from '../crypto';
import { nodeDocAt } from './run-snapshots';
import { rollback, withTransaction, type Rollback, type Tx, type Queryable } from './transaction';

/** Where a message's text or attachments live. */
function messageAt(id: string, column: 'text' | 'attachments'): Sealed {
  return { table: 'messages', column, row: id };
}

export interface MessageRow {
  id: string;
  seq: number;
  role: 'user' | 'assistant';
  text: string;
  attachments: unknown[];
  runId: string | null;
  nodeKey: string | null;
  createdAt: Date;
}

export interface SendMessageParams {
  tenantId: string;
  conversationId: string;
  definitionId: string;
  requestId: string;
  text: string;
  /** attachment references as sent (already validated), [] when none */
  attachments: unknown[];
  shardCount: number;
  /** W3C `traceparent` of the sending request's span, stored on the run (null: not traced) @default null */
  traceParent?: string | null;
  /** the run's priority, 1–5, higher first @default 3 */
  priority?: number;
  /** the tenant's MAX_PENDING_RUNS (0 or absent: unbounded) */
  maxPendingRuns?: number;
  /** checks the definition (Chat graph, attachments, run input) inside the run's transaction */
  prepare: (definition: DefinitionForRun) => RunSeed;
  /** the run's metadata (checked by the caller) @default {} */
  metadata?: Record<string, string>;
}

export type SendMessageResult =
  | { kind: 'created'; runId: string; messageId: string; shard: number }
  | { kind: 'replayed'; runId: string; messageId: string }
  | { kind: 'requestIdReused'; runId: string }
  | { kind: 'runBusy'; runId: string | null }
  | { kind: 'definitionNotFound' }
  | { kind: 'backlogFull'; pending: number };

/** The user message that started run `runId`, with what a replay compares. */
async function triggerMessage(
  db: Queryable,
  tenantId: string,
  runId: string,
): Promise<{ id: string; conversationId: string; text: string; attachments: unknown[]; requestId: string | null } | null> {
  const res = await db.query(
    `SELECT id, conversation_id, text, attachments, request_id FROM messages
     WHERE tenant_id = $1 AND run_id = $2 AND role = 'user' ORDER BY seq LIMIT 1`,
    [tenantId, runId],
  );
  const r = res.rows[0];
  return r
    ? {
        id: r.id,
        conversationId: r.conversation_id,
        text: openText(r.text, messageAt(r.id, 'text')),
        attachments: openJson<unknown[]>(r.attachments ?? [], messageAt(r.id, 'attachments')),
        requestId: r.request_id,
      }
    : null;
}

/**
 * A chat send: starts a run of `definitionId` bound to the conversation with the user
 * message as its trigger, in ONE transaction (the run creation of run-create.ts, which binds
 * the run to the conversation, then the message). Idempotency: `requestId` is the run's
 * request id, so a replay (same key, same conversation, definition, text and attachments)
 * answers the same run and message, ever after; the same key with anything else is
 * `requestIdReused`.
 *
 * One live run per conversation: `createRun` binds the new run by a compare-and-set on
 * the conversation's bound run (moved only when it still holds what was read and that run
 * is terminal); the loser rolls its run back and the send answers `runBusy`.
 */
export async function sendMessage(pool: Pool, p: SendMessageParams): Promise<SendMessageResult> {
  const messageId = randomUUID();
  const res = await createRun(pool, {
    tenantId: p.tenantId,
    definitionId: p.definitionId,
    requestId: p.requestId,
    conversationId: p.conversationId,
    shardCount: p.shardCount,
    traceParent: p.traceParent,
    priority: p.priority,
    maxPendingRuns: p.maxPendingRuns,
    metadata: p.metadata ?? {},
    prepare: p.prepare,
    beforeCommit: async (tx, runId) => {
      await tx.query(
        `INSERT INTO messages (id, tenant_id, conversation_id, role, text, attachments, run_id, request_id, created_at)
         VALUES ($1, $2, $3, 'user', $4, $5::jsonb, $6, $7, now())`,
        [
          messageId,
          p.tenantId,
          p.conversationId,
          sealText(p.text, messageAt(messageId, 'text')),
          sealJsonText(JSON.stringify(p.attachments), messageAt(messageId, 'attachments')),
          runId,
          p.requestId,
        ],
      );
    },
  });
  switch (res.kind) {
    case 'created':
      return { kind: 'created', runId: res.runId, messageId, shard: res.shard };
    case 'definitionNotFound':
    case 'runBusy':
    case 'backlogFull':
      return res;
    case 'requestIdReused':
      return { kind: 'requestIdReused', runId: res.runId };
    case 'replayed': {
      const m = await triggerMessage(pool, p.tenantId, res.runId);
      const same =
        m !== null &&
        m.requestId === p.requestId &&
        m.conversationId === p.conversationId &&
        m.text === p.text &&
        canonicalJson(m.attachments) === canonicalJson(p.attachments);
      return same ? { kind: 'replayed', runId: res.runId, messageId: m.id } : { kind: 'requestIdReused', runId: res.runId };
    }
  }
}

/** True when the tenant has this conversation (a message was sent, or a run names it). */
export async function conversationExists(db: Queryable, tenantId: string, conversationId: string): Promise<boolean> {
  const res = await db.query(
    `SELECT EXISTS (SELECT 1 FROM conversations WHERE tenant_id = $1 AND id = $2)
         OR EXISTS (SELECT 1 FROM runs WHERE tenant_id = $1 AND conversation_id = $2) AS found`,
    [tenantId, conversationId],
  );
  return res.rows[0]?.found === true;
}

/** Opaque cursor of a message page: the last message's seq. */
export function encodeMessageCursor(seq: number): string {
  return Buffer.from(`m:${seq}`, 'utf8').toString('base64url');
}

/** The seq a message cursor names, or null when malformed. */
export function decodeMessageCursor(cursor: string): number | null {
  const m = /^m:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

/** A page of the conversation's messages, oldest first, keyset over seq (reads one past the limit). */
export async function listMessages(
  db: Queryable,
  tenantId: string,
  conversationId: string,
  limit: number,
  afterSeq: number | null,
): Promise<{ items: MessageRow[]; nextCursor: string | null }> {
  const res = await db.query(
    `SELECT id, seq, role, text, attachments, run_id, node_key, created_at FROM messages
     WHERE tenant_id = $1 AND conversation_id = $2 AND ($3::bigint IS NULL OR seq > $3)
     ORDER BY seq LIMIT $4`,
    [tenantId, conversationId, afterSeq, limit + 1],
  );
  const rows = res.rows.slice(0, limit);
  const items: MessageRow[] = rows.map((r) => ({
    id: r.id,
    seq: Number(r.seq),
    role: r.role,
    text: openText(r.text, messageAt(r.id, 'text')),
    attachments: openJson<unknown[]>(r.attachments ?? [], messageAt(r.id, 'attachments')),
    runId: r.run_id,
    nodeKey: r.node_key,
    createdAt: r.created_at,
  }));
  const last = items[items.length - 1];
  return { items, nextCursor: res.rows.length > limit && last ? encodeMessageCursor(last.seq) : null };
}

/** The deterministic id of the message published for (run, node, attempt): an md5-derived UUID. */
export function publishedMessageId(runId: string, nodeKey: string, attempt: number): string {
  return uuidOfText(`${runId}:${nodeKey}:${attempt}`);
}

/** A uuid-shaped id derived from `text` (md5), so the same fact always gets the same id. */
function uuidOfText(text: string): string {
  const h = createHash('md5').update(text, 'utf8').digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** One node attempt to publish as an assistant message (from `publicationsOf`). */
export interface PublishItem {
  runId: string;
  nodeKey: string;
  attempt: number;
  /** null: the output has nothing to say — the attempt is stamped, no message or event */
  text: string | null;
}

export interface PublishOutcome {
  runId: string;
  nodeKey: string;
  attempt: number;
  messageId: string;
  /** seq of the node.published event */
  seq: number;
}

/**
 * The publish outbox write, per item in its own transaction:
 * 1. compare-and-set on the node row — a publishing node (`publishes`, set at run creation
 *    for runs bound to a conversation), Succeeded at `attempt`, not yet published at it, on
 *    a run that is not Cancelling/Cancelled — stamps `published_attempt` (zero rows:
 *    already published, retried or cancelled → skipped; a null text stops here, stamped);
 * 2. inserts the assistant message under the deterministic {@link publishedMessageId}
 *    if absent (and the conversation row, for runs started with a bare conversationId);
 * 3. appends `node.published` `{ messageId }` numbered from `runs.last_seq`, bumping
 *    `version` so a dispatcher's cached snapshot of the run is refused and re-read.
 * Items that fail are reported in `failed`; the caller logs them (a publish never fails
 * the node).
 */
export async function publishNodeOutputs(
  pool: Pool,
  items: PublishItem[],
): Promise<{ published: PublishOutcome[]; skipped: PublishItem[]; failed: { item: PublishItem; error: unknown }[] }> {
  const out = { published: [] as PublishOutcome[], skipped: [] as PublishItem[], failed: [] as { item: PublishItem; error: unknown }[] };
  for (const item of items) {
    try {
      const done = await withTransaction(pool, (tx) => publishOne(tx, item));
      if (done) out.published.push(done);
      else out.skipped.push(item);
    } catch (error) {
      out.failed.push({ item, error });
    }
  }
  return out;
}

/** One item of {@link publishNodeOutputs} inside its transaction; null when skipped (rolled back unless stamped). */
async function publishOne(tx: Tx, item: PublishItem): Promise<PublishOutcome | null | Rollback<PublishOutcome | null>> {
  // the run row first, as flowline_apply locks it (runs, then node_runs): no lock-order deadlock
  await tx.query(`SELECT 1 FROM runs WHERE id = $1 FOR UPDATE`, [item.runId]);
  const cas = await tx.query<{ tenant_id: string; conversation_id: string }>(
    `UPDATE node_runs n SET published_attempt = $3
     FROM runs r
     WHERE n.run_id = $1 AND n.node_key = $2 AND r.id = n.run_id AND n.publishes
       AND n.status = 'Succeeded' AND n.attempt = $3 AND n.published_attempt IS DISTINCT FROM $3
       AND r.conversation_id IS NOT NULL AND r.status NOT IN ('Cancelling', 'Cancelled')
     RETURNING r.tenant_id, r.conversation_id`,
    [item.runId, item.nodeKey, item.attempt],
  );
  const bound = cas.rows[0];
  if (!bound) return rollback(null);
  if (item.text === null) return null;
  await tx.query(
    `INSERT INTO conversations (tenant_id, id, bound_run_id, created_at, updated_at)
     VALUES ($1, $2, NULL, now(), now()) ON CONFLICT (tenant_id, id) DO NOTHING`,
    [bound.tenant_id, bound.conversation_id],
  );
  const messageId = publishedMessageId(item.runId, item.nodeKey, item.attempt);
  await tx.query(
    `INSERT INTO messages (id, tenant_id, conversation_id, role, text, run_id, node_key, attempt, created_at)
     VALUES ($1, $2, $3, 'assistant', $4, $5, $6, $7, now())
     ON CONFLICT (id) DO NOTHING`,
    [messageId, bound.tenant_id, bound.conversation_id, sealText(item.text, messageAt(messageId, 'text')), item.runId, item.nodeKey, item.attempt],
  );
  const run = await tx.query<{ last_seq: number }>(
    `UPDATE runs SET last_seq = last_seq + 1, version = version + 1 WHERE id = $1 RETURNING last_seq`,
    [item.runId],
  );
  const seq = run.rows[0]!.last_seq;
  await tx.query(
    `INSERT INTO events (run_id, seq, kind, node_key, at, detail) VALUES ($1, $2, 'node.published', $3, now(), $4::jsonb)`,
    [item.runId, seq, item.nodeKey, JSON.stringify({ messageId })],
  );
  return { runId: item.runId, nodeKey: item.nodeKey, attempt: item.attempt, messageId, seq };
}

/** A Succeeded publishing node row whose publish never landed (found by the heal scan). */
export interface UnpublishedRow {
  runId: string;
  nodeKey: string;
  kind: string;
  attempt: number;
  /** the node's output envelope */
  output: unknown;
}

/**
 * The heal scan of the publish outbox, over runs of `shards`: Succeeded publishing nodes
 * not yet stamped at their attempt, on runs that are not Cancelling/Cancelled. Served by
 * the partial index node_runs_unpublished_idx, which holds only such rows (normally none:
 * the post-commit pass stamps them), so the scan costs nothing when all is well.
 */
export async function findUnpublished(db: Queryable, shards: number[], limit: number): Promise<UnpublishedRow[]> {
  if (shards.length === 0) return [];
  const res = await db.query({
    name: 'flowline_unpublished',
    text: `SELECT n.run_id, n.node_key, n.kind, n.attempt, n.output::text AS output
     FROM node_runs n JOIN runs r ON r.id = n.run_id
     WHERE n.publishes AND n.status = 'Succeeded' AND n.published_attempt IS DISTINCT FROM n.attempt
       AND r.shard = ANY($1::int[]) AND r.status NOT IN ('Cancelling', 'Cancelled')
     LIMIT $2`,
    values: [shards, limit],
  });
  return res.rows.map((r) => ({
    runId: r.run_id,
    nodeKey: r.node_key,
    kind: r.kind,
    attempt: r.attempt,
    output: exactJson(openJsonText(r.output, nodeDocAt(r.run_id, r.node_key, 'output'))),
  }));
}

/** A conversation in a list: its bound run (the last one a message started) and that run's definition and status. */
export interface ConversationRow {
  id: string;
  boundRunId: string | null;
  definitionId: string | null;
  boundRunStatus: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Opaque cursor of a conversation page: the last row's creation time (µs) and id. */
export function encodeConversationCursor(createdKey: string, id: string): string {
  return encodeKeysetCursor('c:', createdKey, id);
}

/** The position a conversation cursor names, or null when malformed (see {@link decodeKeysetCursor}). */
export function decodeConversationCursor(cursor: string): KeysetPosition | null {
  // the id is any text a conversation id can be: 1–128 characters, never U+0000 (Postgres cannot hold it)
  return decodeKeysetCursor(cursor, 'c:', (id) => id.length > 0 && [...id].length <= 128 && !id.includes('\u0000'));
}

/**
 * A page of the tenant's conversations, newest first, keyset over (created_at desc, id
 * desc); with `definitionId`, only those whose bound run is of that definition. Reads one
 * row past the limit to know whether another page exists.
 */
export async function listConversations(
  db: Queryable,
  tenantId: string,
  filter: { definitionId?: string },
  limit: number,
  after: { createdKey: string; id: string } | null,
): Promise<{ items: ConversationRow[]; nextCursor: string | null }> {
  const res = await db.query(
    `SELECT c.id, c.bound_run_id, r.definition_id, r.status AS bound_run_status, c.created_at, c.updated_at,
            to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key
     FROM conversations c
     LEFT JOIN runs r ON r.id = c.bound_run_id
     WHERE c.tenant_id = $1
       AND ($2::uuid IS NULL OR r.definition_id = $2)
       AND ($3::timestamp IS NULL OR (c.created_at, c.id) < (($3::timestamp AT TIME ZONE 'UTC'), $4::text))
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT $5`,
    [tenantId, filter.definitionId ?? null, after?.createdKey ?? null, after?.id ?? null, limit + 1],
  );
  const rows = res.rows.slice(0, limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map((r) => ({
      id: r.id,
      boundRunId: r.bound_run_id,
      definitionId: r.definition_id ?? null,
      boundRunStatus: r.bound_run_status ?? null,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    })),
    nextCursor: res.rows.length > limit && last ? encodeConversationCursor(last.created_key, last.id) : null,
  };
}

/**
 * The status of the newest run of `definitionId` bound to the conversation, or null when it
 * has none. A send reads it to ask for confirmation before starting that definition again
 * after a run that failed or was cancelled.
 */
export async function lastConversationRunStatus(db: Queryable, tenantId: string, conversationId: string, definitionId: string): Promise<string | null> {
  const res = await db.query<{ status: string }>(
    `SELECT status FROM runs WHERE tenant_id = $1 AND conversation_id = $2 AND definition_id = $3
     ORDER BY created_at DESC, id DESC LIMIT 1`,
    [tenantId, conversationId, definitionId],
  );
  return res.rows[0]?.status ?? null;
}

/** What the conversation's run list says of each run beyond its summary. */
export interface ConversationRunFacts {
  /** the definition's current name; null once the definition is deleted */
  definitionName: string | null;
  /** the user message whose send started the run */
  triggerMessageId: string | null;
  /** the ChatInput waiting for the conversation's next answer, if any */
  pendingInput: { nodeKey: string } | null;
  /** an Agent or LlmCall node of the run is Queued or Running, so a steer would be taken */
  steerable: boolean;
}

/** {@link ConversationRunFacts} of the given runs of the tenant, in one statement. */
export async function conversationRunFacts(db: Queryable, tenantId: string, runIds: readonly string[]): Promise<Map<string, ConversationRunFacts>> {
  const out = new Map<string, ConversationRunFacts>();
  if (runIds.length === 0) return out;
  const res = await db.query<{ id: string; definition_name: string | null; trigger_message_id: string | null; pending_key: string | null; steerable: boolean }>(
    `SELECT r.id, d.name AS definition_name,
       (SELECT m.id FROM messages m
         WHERE m.run_id = r.id AND m.role = 'user' AND m.request_id IS NOT DISTINCT FROM r.request_id
         ORDER BY m.seq LIMIT 1) AS trigger_message_id,
       (SELECT n.node_key FROM node_runs n
         WHERE n.run_id = r.id AND n.status = 'WaitingForApproval' AND n.pending_decision_kind = 'Answer'
         ORDER BY n.node_key LIMIT 1) AS pending_key,
       r.status NOT IN ('Completed', 'Failed', 'Cancelled', 'Cancelling') AND EXISTS (
         SELECT 1 FROM node_runs n WHERE n.run_id = r.id AND n.kind IN ('Agent', 'LlmCall') AND n.status IN ('Queued', 'Running')
       ) AS steerable
     FROM runs r LEFT JOIN definitions d ON d.id = r.definition_id AND d.tenant_id = r.tenant_id
     WHERE r.tenant_id = $1 AND r.id = ANY($2::uuid[])`,
    [tenantId, runIds],
  );
  for (const r of res.rows) {
    out.set(r.id, {
      definitionName: r.definition_name,
      triggerMessageId: r.trigger_message_id,
      pendingInput: r.pending_key === null ? null : { nodeKey: r.pending_key },
      steerable: r.steerable,
    });
  }
  return out;
}

/** The id a steer's message gets in the conversation: the same for a replayed steer, so it is posted once. */
export function steerMessageId(operationId: string, runId: string, nodeKey: string): string {
  return uuidOfText(`steer:${operationId}:${runId}:${nodeKey}`);
}

/**
 * Posts a steer's text into the conversation the run is bound to, as a user message of that
 * run (so the chat shows what the person said to the running node). Idempotent by
 * {@link steerMessageId}. Nothing is posted for a run bound to no conversation.
 * @returns the message id, or null when the run has no conversation
 */
export async function postSteerMessage(db: Queryable, tenantId: string, runId: string, nodeKey: string, operationId: string, text: string): Promise<string | null> {
  const id = steerMessageId(operationId, runId, nodeKey);
  const res = await db.query<{ conversation_id: string | null }>(
    `WITH run AS (SELECT conversation_id FROM runs WHERE id = $2 AND tenant_id = $1 AND conversation_id IS NOT NULL),
     posted AS (
       INSERT INTO messages (id, tenant_id, conversation_id, role, text, run_id, node_key, created_at)
       SELECT $3, $1, run.conversation_id, 'user', $4, $2, $5, now() FROM run
       ON CONFLICT (id) DO NOTHING RETURNING 1)
     SELECT conversation_id FROM run`,
    [tenantId, runId, id, sealText(text, messageAt(id, 'text')), nodeKey],
  );
  return res.rows[0] ? id : null;
}

/**
 * Purges a conversation: its messages are deleted, its runs unbound (their `conversation_id`
 * cleared; a run is never deleted, and an unbound run publishes nothing more), and the
 * conversation row removed. Atomic.
 * @returns what was purged, or null when the tenant has no such conversation (nor messages or runs under its id)
 */
export async function purgeConversation(pool: Pool, tenantId: string, conversationId: string): Promise<{ messages: number; runs: number } | null> {
  return withTransaction(pool, async (tx) => {
    const conv = await tx.query(`DELETE FROM conversations WHERE tenant_id = $1 AND id = $2 RETURNING 1`, [tenantId, conversationId]);
    const runs = await tx.query(`UPDATE runs SET conversation_id = NULL WHERE tenant_id = $1 AND conversation_id = $2`, [tenantId, conversationId]);
    const msgs = await tx.query(`DELETE FROM messages WHERE tenant_id = $1 AND conversation_id = $2`, [tenantId, conversationId]);
    if (conv.rowCount === 0 && runs.rowCount === 0 && msgs.rowCount === 0) return null;
    return { messages: msgs.rowCount ?? 0, runs: runs.rowCount ?? 0 };
  });
}
