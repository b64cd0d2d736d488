/**
 * Conversation routes (CONTRACT §5, §8): a chat send starts a run of a Chat definition
 * bound to the conversation (one live run per conversation → 409 RunBusy; `requestId`
 * replays forever); the message list (user sends and published assistant answers,
 * oldest first) and the conversation's runs (newest first). Conversation ids are
 * client-chosen strings of 1–128 characters, scoped to the tenant.
 *
 * The run input of a send is `{ text, attachments? }` (attachments only when given);
 * it is checked like any run input (MAX_RUN_INPUT_BYTES, the graph's input schemas).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import {
  conversationExists,
  conversationRunFacts,
  lastConversationRunStatus,
  purgeConversation,
  decodeConversationCursor,
  decodeMessageCursor,
  listConversations,
  decodePageCursor,
  listMessages,
  listRuns,
  sendMessage,
  type MessageRow,
} from '@flowline/db';
import { checkRunMetadata, DEFAULT_METADATA_LIMITS } from '@flowline/graph';
import type { AppDeps, AppEnv } from '../context';
import { ApiError, BacklogFullError, MetadataInvalidError, NotFoundError } from '../errors';
import { bodyMember, sendJson } from '../body';
import { checkStartable } from '../graph-rules';
import { withStartCatalog } from '../mcp-catalog';
import { runSeed, startPlacement } from '../run-start';
import { isStorableId, isUuid, iso, pageLimit, requireCursor, requireUuid, runSummary } from '../present';
import { publishWake } from '../wake';
import { ErrorSchema, PageQuery, PrioritySchema, RunSummarySchema, jsonContent, pageSchema, backlogFullResponse, jsonBody } from '../schemas';
import { v1Route } from '../v1-route';

/** Longest conversation id (CONTRACT §8). */
export const MAX_CONVERSATION_ID_CHARS = 128;

/** A send while the conversation's bound run is not terminal. */
export class RunBusyError extends ApiError {
  constructor(runId: string | null) {
    super(409, 'RunBusy', 'the conversation already has a live run', runId ? [{ runId }] : []);
  }
}

/** A requestId that already started another send (or a run outside this conversation). */
export class MessageRequestIdReusedError extends ApiError {
  constructor(runId: string) {
    super(409, 'RequestIdReused', 'requestId already started a different message or run', [{ runId }]);
  }
}

/**
 * A send that would start a definition again right after its last run in this conversation
 * failed or was cancelled, while the graph's `chat.requireRerunConfirmation` is on: the
 * person is asked first, and the same send with `confirmRerun: true` goes through.
 */
export class RerunConfirmationRequiredError extends ApiError {
  constructor(lastStatus: string) {
    super(409, 'RerunConfirmationRequired', `the last run of this definition in the conversation is ${lastStatus}; send again with confirmRerun: true to start it anew`, [
      { key: 'confirmRerun', message: `the last run ended ${lastStatus}` },
    ]);
  }
}

/** A send to a definition that is not a Chat graph. */
export class NotChatDefinitionError extends ApiError {
  constructor() {
    super(400, 'DefinitionNotChat', 'messages start runs of Chat definitions only');
  }
}

/** Attachments sent to a Chat graph whose `chat.acceptsAttachments` is off. */
export class AttachmentsNotAcceptedError extends ApiError {
  constructor() {
    super(400, 'AttachmentsNotAccepted', 'this Chat graph does not accept attachments');
  }
}

const ConversationParam = z.object({
  id: z
    .string()
    .min(1)
    .max(MAX_CONVERSATION_ID_CHARS)
    .refine(isStorableId, 'must not contain U+0000 or a lone UTF-16 surrogate')
    .openapi({ param: { name: 'id', in: 'path' }, description: 'client-chosen conversation id, 1–128 characters' }),
});
/** GET params: any string (an id that cannot exist reads as not found). */
const ConversationReadParam = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'conversation id' }),
});

const AttachmentSchema = z
  .object({
    fileId: z.string().min(1).max(200),
    name: z.string().min(1).max(256),
    kind: z.enum(['text', 'image']),
    bytes: z.number().int().min(0),
  })
  .strict()
  .openapi('Attachment');

const SendMessageBody = z
  .object({
    definitionId: z.string().min(1),
    text: z.string().min(1),
    requestId: z.string().min(1).max(200),
    attachments: z.array(AttachmentSchema).optional(),
    priority: PrioritySchema.optional(),
    metadata: z.unknown().optional().openapi({ type: 'object', additionalProperties: { type: 'string' }, description: "the run's metadata (RunMetadata, as on a run start); 400 MetadataInvalid names a bad key" }),
    confirmRerun: z
      .boolean()
      .optional()
      .openapi({ description: 'true starts the definition again after its last run in this conversation failed or was cancelled (else 409 RerunConfirmationRequired while chat.requireRerunConfirmation is on)' }),
  })
  .strict();

/** What a send did: started a run, started one again after a failed or cancelled one (confirmed), or replayed an earlier send. */
const SEND_ACTIONS = ['started', 'rerun', 'replayed'] as const;

const MessageAcceptedSchema = z
  .object({ runId: z.string(), messageId: z.string(), action: z.enum(SEND_ACTIONS) })
  .openapi('MessageAccepted');

const MessageSchema = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    text: z.string(),
    attachments: z.array(AttachmentSchema),
    runId: z.string().nullable(),
    nodeKey: z.string().nullable(),
    createdAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Message');

const MessageListSchema = pageSchema(MessageSchema, 'MessageList');

const sendRoute = v1Route.conversations('post', '/v1/conversations/{id}/messages', {
  operationId: 'sendConversationMessage',
  summary: 'Send a message to a conversation (starts a run)',
  description:
    'Starts a run of the Chat definition bound to the conversation, with run input `{ text, attachments? }` and the ' +
    'user message as its trigger. `requestId` is the idempotency key (never expires): the same send again answers ' +
    'the same runId and messageId. An End (unless `publishToChat: false`) and LlmCall/Agent nodes with ' +
    '`publishToChat: true` post their answer as assistant messages.',
  request: { params: ConversationParam, body: jsonBody(SendMessageBody) },
  responses: {
    202: jsonContent(MessageAcceptedSchema, 'run started (or the same send replayed)'),
    409: jsonContent(ErrorSchema, 'RunBusy (a bound run is live), RerunConfirmationRequired, DefinitionDisabled or RequestIdReused'),
    429: backlogFullResponse('sending'),
  },
});
const messagesRoute = v1Route.conversations('get', '/v1/conversations/{id}/messages', {
  operationId: 'listConversationMessages',
  summary: "List a conversation's messages, oldest first",
  request: { params: ConversationReadParam, query: PageQuery },
  responses: { 200: jsonContent(MessageListSchema, 'messages, oldest first (published answers included)') },
});
const ConversationRunSchema = RunSummarySchema.extend({
  definitionName: z.string().nullable().openapi({ description: "the definition's current name; null once it is deleted" }),
  triggerMessageId: z.string().nullable().openapi({ description: 'the user message whose send started the run' }),
  pendingInput: z
    .object({ nodeKey: z.string() })
    .nullable()
    .openapi({ description: 'the ChatInput waiting for the next answer (decide with decision "Answer"), or null' }),
  steerable: z.boolean().openapi({ description: 'an Agent or LlmCall node is Queued or Running: a steer would be taken' }),
}).openapi('ConversationRun');

const runsRoute = v1Route.conversations('get', '/v1/conversations/{id}/runs', {
  operationId: 'listConversationRuns',
  summary: "List a conversation's runs, newest first",
  request: { params: ConversationReadParam, query: PageQuery },
  responses: {
    200: jsonContent(
      pageSchema(ConversationRunSchema, 'ConversationRunList'),
      'runs bound to the conversation, newest first, with what the chat shows of each',
    ),
  },
});
const purgeRoute = v1Route.conversations('delete', '/v1/conversations/{id}', {
  operationId: 'purgeConversation',
  summary: 'Purge a conversation: delete its messages, unbind its runs',
  description:
    'Deletes the conversation and every message of it, and unbinds its runs (their conversationId becomes null; no run is ' +
    'deleted, and a live one goes on without publishing into any conversation). 404 when the tenant has no such conversation.',
  request: { params: ConversationReadParam },
  responses: { 204: { description: 'purged' } },
});

const ConversationSchema = z
  .object({
    id: z.string(),
    boundRunId: z.string().nullable().openapi({ description: 'the run the last accepted message started' }),
    definitionId: z.string().nullable().openapi({ description: 'the definition of the bound run' }),
    boundRunStatus: z.string().nullable(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Conversation');

const ConversationListQuery = PageQuery.extend({
  definitionId: z.string().optional().openapi({ description: 'only conversations whose bound run is of this definition' }),
});

const listRoute = v1Route.conversations('get', '/v1/conversations', {
  operationId: 'listConversations',
  summary: 'List conversations, newest first',
  request: { query: ConversationListQuery },
  responses: {
    200: jsonContent(pageSchema(ConversationSchema, 'ConversationList'), 'newest first'),
  },
});

function message(m: MessageRow) {
  return {
    id: m.id,
    role: m.role,
    text: m.text,
    attachments: m.attachments,
    runId: m.runId,
    nodeKey: m.nodeKey,
    createdAt: iso(m.createdAt),
  };
}

/** The conversation id of a read, or 404 when it cannot name a conversation of the tenant. */
async function requireConversation(deps: AppDeps, tenantId: string, id: string): Promise<string> {
  if (id.length < 1 || id.length > MAX_CONVERSATION_ID_CHARS || !isStorableId(id)) throw new NotFoundError('conversation');
  if (!(await conversationExists(deps.pool, tenantId, id))) throw new NotFoundError('conversation');
  return id;
}

/** Registers the conversation routes on `app`. */
export function registerConversationRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const { pool } = deps;

  app.openapi(sendRoute, async (c) => {
    const conversationId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const definitionId = requireUuid(body.definitionId, 'definition');
    const attachments = body.attachments ?? [];
    const input = attachments.length > 0 ? { text: body.text, attachments } : { text: body.text };
    const metadata = checkRunMetadata(bodyMember(c, 'metadata'), deps.limits.metadata ?? DEFAULT_METADATA_LIMITS);
    if (!metadata.ok) throw new MetadataInvalidError(metadata.issues);
    // read before the send: only a send that would create a run asks (a replay answers its run)
    const lastStatus = await lastConversationRunStatus(pool, c.get('tenant'), conversationId, definitionId);
    const rerun = lastStatus === 'Failed' || lastStatus === 'Cancelled';
    const res = await withStartCatalog(pool, deps.mcp, c.get('tenant'), (mcp) => sendMessage(pool, {
      tenantId: c.get('tenant'),
      conversationId,
      definitionId,
      requestId: body.requestId,
      text: body.text,
      attachments,
      metadata: metadata.metadata,
      ...startPlacement(deps, c.get('tenant'), body.priority),
      prepare: (def) => {
        const graph = checkStartable(def, deps.limits.maxNodesPerDefinition, deps.tools.parserCatalog(), mcp);
        if (graph.kind !== 'Chat') throw new NotChatDefinitionError();
        if (rerun && graph.chat?.requireRerunConfirmation !== false && body.confirmRerun !== true) {
          throw new RerunConfirmationRequiredError(lastStatus);
        }
        if (attachments.length > 0 && graph.chat?.acceptsAttachments !== true) throw new AttachmentsNotAcceptedError();
        return runSeed(deps, graph, input);
      },
    }));
    switch (res.kind) {
      case 'definitionNotFound':
        throw new NotFoundError('definition');
      case 'requestIdReused':
        throw new MessageRequestIdReusedError(res.runId);
      case 'runBusy':
        throw new RunBusyError(res.runId);
      case 'backlogFull':
        throw new BacklogFullError(res.pending, deps.limits.backlogRetryAfterS ?? 5);
      case 'created':
        deps.logger.info({ runId: res.runId, definitionId, messageId: res.messageId }, 'conversation run created');
        await publishWake(deps, res.runId, c.get('tenant'));
        break;
      case 'replayed':
        break;
    }
    const action = res.kind === 'replayed' ? 'replayed' : rerun ? 'rerun' : 'started';
    return sendJson(202, { runId: res.runId, messageId: res.messageId, action }, { location: `/v1/runs/${res.runId}` });
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    // a malformed definition id matches no conversation
    if (q.definitionId !== undefined && !isUuid(q.definitionId)) return sendJson(200, { items: [], nextCursor: null });
    const page = await listConversations(
      pool,
      c.get('tenant'),
      q.definitionId !== undefined ? { definitionId: q.definitionId.toLowerCase() } : {},
      pageLimit(q.limit),
      requireCursor(q.cursor, decodeConversationCursor),
    );
    const items = page.items.map((r) => ({ ...r, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) }));
    return sendJson(200, { items, nextCursor: page.nextCursor });
  });

  app.openapi(messagesRoute, async (c) => {
    const tenant = c.get('tenant');
    const id = await requireConversation(deps, tenant, c.req.valid('param').id);
    const q = c.req.valid('query');
    const page = await listMessages(pool, tenant, id, pageLimit(q.limit), requireCursor(q.cursor, decodeMessageCursor));
    return sendJson(200, { items: page.items.map(message), nextCursor: page.nextCursor });
  });

  app.openapi(runsRoute, async (c) => {
    const tenant = c.get('tenant');
    const id = await requireConversation(deps, tenant, c.req.valid('param').id);
    const q = c.req.valid('query');
    const page = await listRuns(pool, tenant, { conversationId: id }, pageLimit(q.limit), requireCursor(q.cursor, decodePageCursor));
    const facts = await conversationRunFacts(pool, tenant, page.items.map((r) => r.id));
    const none = { definitionName: null, triggerMessageId: null, pendingInput: null, steerable: false };
    return sendJson(200, { items: page.items.map((r) => ({ ...runSummary(r), ...(facts.get(r.id) ?? none) })), nextCursor: page.nextCursor });
  });

  app.openapi(purgeRoute, async (c) => {
    const id = c.req.valid('param').id;
    if (id.length < 1 || id.length > MAX_CONVERSATION_ID_CHARS || !isStorableId(id)) throw new NotFoundError('conversation');
    const purged = await purgeConversation(pool, c.get('tenant'), id);
    if (!purged) throw new NotFoundError('conversation');
    deps.logger.info({ conversationId: id, messages: purged.messages, runs: purged.runs }, 'conversation purged');
    return c.body(null, 204);
  });
}
