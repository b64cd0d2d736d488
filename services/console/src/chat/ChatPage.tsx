/**
 * The chat page (`/chat?definitionId&conversationId`) for Chat graphs: the definition's
 * conversations, a conversation's messages (the user's and the answers nodes published),
 * a composer, and the bound run's status card. The composer answers the bound run's
 * waiting ChatInput when there is one, else sends a message that starts a run; a 409
 * RunBusy is explained (one live run per conversation) with a link to that run.
 */
import { useEffect, useReducer, useId, useMemo, useRef, useState } from 'react';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, getRouteApi, useNavigate } from '@tanstack/react-router';
import { isApiRequestError, type ConversationMessage, type RunDetail } from '@flowline/client';
import { keys, useConversations, useDefinition, useDefinitionIndex, useRunDetail } from '../api/queries';
import { newOperationId } from '../api/operation';
import { refusalOf } from '../api/refusal';
import { readGraphDoc } from '../definitions/graph-doc';
import { useRunLive } from '../live/use-run-live';
import { useCan, useClient } from '../session/session';
import { StatusBadge, TERMINAL_RUN_STATUSES } from '../ui/status';
import { EmptyState, Loading, RefusalNote, Time } from '../ui/primitives';
import { STEERABLE_KINDS } from '../ui/kinds';
import { ChatLive } from './ChatLive';
import { AttachmentList, AttachmentPicker, ModelReceived, acceptsAttachments, usePendingAttachments } from './attachments';

const route = getRouteApi('/chat');

/**
 * Conversations this tab opened with "New conversation" and has not written to yet: nothing of
 * them is on the server, so their messages and runs are not read (the routes would answer 404).
 */
const unwritten = new Set<string>();

function newConversationId(): string {
  const id = `c-${crypto.randomUUID().slice(0, 13)}`;
  unwritten.add(id);
  return id;
}

/** Every message of the conversation, oldest first (pages read on until the newest). */
function useMessages(conversationId: string | undefined, pollMs: number | false, fresh: boolean) {
  const client = useClient();
  const q = useInfiniteQuery({
    queryKey: keys.messages(conversationId ?? ''),
    queryFn: async ({ pageParam }) => {
      try {
        return await client.conversations.messages(conversationId!, { limit: 200, ...(pageParam ? { cursor: pageParam } : {}) });
      } catch (err) {
        // a conversation nobody wrote to yet does not exist on the server
        if (isApiRequestError(err, 'NotFound')) return { items: [] as ConversationMessage[], nextCursor: null };
        throw err;
      }
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    enabled: !!conversationId && !fresh,
    refetchInterval: pollMs,
  });
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = q;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  return q;
}

/** The conversation's newest run (the bound one). */
function useBoundRunId(conversationId: string | undefined, fresh: boolean) {
  const client = useClient();
  return useQuery({
    queryKey: keys.conversationRuns(conversationId ?? ''),
    queryFn: async () => {
      try {
        return (await client.conversations.runs(conversationId!, { limit: 1 })).items[0]?.id ?? null;
      } catch (err) {
        if (isApiRequestError(err, 'NotFound')) return null;
        throw err;
      }
    },
    enabled: !!conversationId && !fresh,
  });
}

/** The node of the bound run waiting for a chat answer, with its prompt from the pinned graph. */
function waitingInput(detail: RunDetail | undefined): { nodeKey: string; prompt: string | null } | null {
  const n = detail?.nodeRuns.find((r) => r.status === 'WaitingForApproval' && r.pendingDecisionKind === 'Answer');
  if (!detail || !n) return null;
  const prompt = readGraphDoc(detail.graph).nodes.find((x) => x.key === n.nodeKey)?.config.prompt;
  return { nodeKey: n.nodeKey, prompt: typeof prompt === 'string' ? prompt : null };
}

function Thread({ messages, pending }: { messages: ConversationMessage[]; pending: boolean }) {
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [messages.length, pending]);
  return (
    <ol className="thread" aria-label="Messages" aria-live="polite" ref={list}>
      {messages.map((m) => (
        <li key={m.id} className={`bubble bubble-${m.role}`} data-role={m.role}>
          <div className="bubble-text">{m.text}</div>
          <AttachmentList items={m.attachments} label="Attached files" />
          <div className="bubble-meta">
            {m.role === 'assistant' && m.nodeKey ? <span className="mono">{m.nodeKey}</span> : null} <Time iso={m.createdAt} />
          </div>
        </li>
      ))}
      {pending ? (
        <li className="bubble bubble-assistant bubble-typing" aria-label="the run is working">
          <span className="typing" /> <span className="typing" /> <span className="typing" />
        </li>
      ) : null}
    </ol>
  );
}

function Composer({
  definitionId,
  conversationId,
  detail,
  attachable,
  onSent,
}: {
  definitionId: string;
  conversationId: string;
  detail: RunDetail | undefined;
  /** the Chat graph accepts files with a message */
  attachable: boolean;
  onSent(): void;
}) {
  const client = useClient();
  const canRun = useCan('run');
  const [text, setText] = useState('');
  const id = useId();
  const input = waitingInput(detail);
  const pending = usePendingAttachments(async (blob, name) => {
    const f = await client.files.upload(blob, name);
    return { fileId: f.fileId, name: f.name, kind: f.kind, bytes: f.bytes };
  });
  // files travel with a message that starts a run; an answer to a waiting ChatInput carries text only
  const withFiles = attachable && !input;
  const send = useMutation({
    mutationFn: async ({ text: t, confirmRerun }: { text: string; confirmRerun?: boolean }) => {
      const operationId = newOperationId();
      if (input && detail) {
        await client.runs.decide(detail.run.id, input.nodeKey, { operationId, decision: 'Answer', payload: { text: t } }, { idempotencyKey: operationId });
      } else {
        const attachments = withFiles ? pending.ready : [];
        await client.conversations.send(conversationId, {
          definitionId,
          text: t,
          requestId: operationId,
          ...(attachments.length > 0 ? { attachments } : {}),
          ...(confirmRerun ? { confirmRerun } : {}),
        });
      }
    },
    onSuccess: () => {
      setText('');
      pending.clear();
      onSent();
    },
  });
  const blocked = send.isPending || (withFiles && pending.busy);
  if (!canRun) return <p className="muted composer-note">This key can read the conversation but not write to it (it lacks the run scope).</p>;
  const busy = send.error && isApiRequestError(send.error, 'RunBusy') ? refusalOf(send.error) : null;
  const busyRun = busy && isApiRequestError(send.error) ? ((send.error.details as Array<{ runId?: string }> | undefined)?.[0]?.runId ?? null) : null;
  // the last run of this workflow here failed or was cancelled: the server asks before starting it again
  const rerun = send.error && isApiRequestError(send.error, 'RerunConfirmationRequired') ? refusalOf(send.error) : null;
  const rerunStatus = rerun && isApiRequestError(send.error) ? /ended (\w+)/.exec((send.error.details as Array<{ message?: string }> | undefined)?.[0]?.message ?? '')?.[1] : undefined;
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim() && !blocked) send.mutate({ text });
      }}
    >
      {input ? (
        <p className="composer-context">
          The run asks: <strong>{input.prompt ?? input.nodeKey}</strong> — your message answers it.
        </p>
      ) : null}
      {busy ? (
        <div className="refusal" role="alert">
          <code className="refusal-code">{busy.code}</code>
          <span className="refusal-message">
            {busy.message}. A conversation runs one run at a time: this message can start once that run finishes
            {busyRun ? (
              <>
                {' '}
                (<Link to="/run" search={{ runId: busyRun }}>open the run</Link>)
              </>
            ) : null}
            .
          </span>
        </div>
      ) : rerun ? (
        <div className="notice rerun-confirm" role="alert" data-code={rerun.code}>
          <span>
            The last run of this workflow in this conversation ended <strong>{rerunStatus ?? 'without completing'}</strong>. Start the workflow again with this
            message?
          </span>{' '}
          <button type="button" className="btn btn-primary btn-sm" disabled={send.isPending} onClick={() => send.mutate({ text, confirmRerun: true })}>
            Start again
          </button>{' '}
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => send.reset()}>
            Not now
          </button>
        </div>
      ) : (
        <RefusalNote error={send.error} title="Not sent" />
      )}
      <div className="composer-row">
        <label htmlFor={id} className="visually-hidden">
          Message
        </label>
        <textarea
          id={id}
          rows={2}
          placeholder={input ? 'Answer the run…' : 'Write a message…'}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              if (text.trim() && !blocked) send.mutate({ text });
            }
          }}
        />
        <button type="submit" className="btn btn-primary" disabled={blocked || !text.trim()}>
          {input ? 'Answer' : 'Send'}
        </button>
      </div>
      {withFiles ? <AttachmentPicker pending={pending} /> : null}
    </form>
  );
}

function RunCard({ detail, refusal, onSteered }: { detail: RunDetail | undefined; refusal: unknown; onSteered(): void }) {
  if (!detail) return <p className="muted small">No run yet: the first message starts one.</p>;
  const waiting = detail.nodeRuns.filter((n) => n.status === 'WaitingForApproval');
  const running = detail.nodeRuns.filter((n) => n.status === 'Running' || n.status === 'Queued');
  return (
    <div className="run-card" data-run-id={detail.run.id} data-status={detail.run.status}>
      <div className="run-card-head">
        <StatusBadge status={detail.run.status} />
        <Link to="/run" search={{ runId: detail.run.id }} className="small">
          Open run
        </Link>
      </div>
      <dl className="facts">
        <div>
          <dt>Started</dt>
          <dd>
            <Time iso={detail.run.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Nodes</dt>
          <dd>
            {detail.nodeRuns.filter((n) => n.status === 'Succeeded').length}/{detail.nodeRuns.length} done
          </dd>
        </div>
      </dl>
      {running.length > 0 ? <p className="small">Working: {running.map((n) => n.nodeKey).join(', ')}</p> : null}
      {running
        .filter((n) => STEERABLE_KINDS.has(n.kind))
        .map((n) => (
          <ChatLive key={`${n.nodeKey}:${n.attempt}:${n.status}`} runId={detail.run.id} node={n} onSteered={onSteered} />
        ))}
      <ModelReceived detail={detail} />
      {waiting.length > 0 ? <p className="small">Waiting on: {waiting.map((n) => n.nodeKey).join(', ')}</p> : null}
      {detail.run.failureClass !== 'None' ? (
        <p className="small failure">
          {detail.run.failureClass}: {detail.run.reason}
        </p>
      ) : null}
      <RefusalNote error={refusal} />
    </div>
  );
}

export function ChatPage() {
  const search = route.useSearch();
  const navigate = useNavigate({ from: '/chat' });
  const qc = useQueryClient();
  const canRun = useCan('run');
  const defs = useDefinitionIndex();
  const chatDefs = useMemo(() => [...defs.values()].filter((d) => d.kind === 'Chat'), [defs]);
  const definitionId = search.definitionId ?? chatDefs[0]?.id;
  const conversationId = search.conversationId;
  const conversations = useConversations(definitionId);
  const [, written] = useReducer((n: number) => n + 1, 0);
  const fresh = conversationId !== undefined && unwritten.has(conversationId);
  const bound = useBoundRunId(conversationId, fresh);
  const live = useRunLive(bound.data ?? undefined);
  const run = useRunDetail(bound.data ?? undefined, live.pollMs);
  const messages = useMessages(conversationId, live.pollMs, fresh);
  const pickerId = useId();
  const definition = useDefinition(definitionId);

  // a change of the bound run (a node published, the run ended) re-reads the messages
  const runVersion = run.dataUpdatedAt;
  useEffect(() => {
    if (conversationId && runVersion) void qc.invalidateQueries({ queryKey: keys.messages(conversationId) });
  }, [qc, conversationId, runVersion]);

  const items = messages.data?.pages.flatMap((p) => p.items) ?? [];
  const working = !!run.data && !TERMINAL_RUN_STATUSES.has(run.data.run.status) && !waitingInput(run.data) && run.data.run.status !== 'WaitingForApproval';

  return (
    <div className="page page-wide chat-page">
      <div className="page-head">
        <div>
          <h1>Chat</h1>
          <p className="muted">Conversations with Chat graphs: each message starts a run; published answers come back here.</p>
        </div>
      </div>
      {chatDefs.length === 0 && !defs.size ? <Loading label="Reading definitions" /> : null}
      {defs.size > 0 && chatDefs.length === 0 ? (
        <EmptyState title="No Chat definition">A definition with "kind": "Chat" gets a chat page here.</EmptyState>
      ) : null}
      {definitionId ? (
        <div className="chat-layout">
          <aside className="card chat-side" aria-label="Conversations">
            <label htmlFor={pickerId}>Chat graph</label>
            <select id={pickerId} value={definitionId} onChange={(e) => void navigate({ search: { definitionId: e.target.value } })}>
              {chatDefs.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
            {canRun ? (
              <button type="button" className="btn btn-primary" onClick={() => void navigate({ search: { definitionId, conversationId: newConversationId() } })}>
                New conversation
              </button>
            ) : null}
            <RefusalNote error={conversations.error} />
            <ul className="conversation-list">
              {conversations.data?.items.map((c) => (
                <li key={c.id}>
                  <Link
                    to="/chat"
                    search={{ definitionId, conversationId: c.id }}
                    className={`conversation${c.id === conversationId ? ' is-active' : ''}`}
                    aria-current={c.id === conversationId ? 'page' : undefined}
                  >
                    <span className="mono conversation-id">{c.id}</span>
                    {c.boundRunStatus ? <StatusBadge status={c.boundRunStatus} size="sm" /> : null}
                    <Time iso={c.updatedAt} />
                  </Link>
                </li>
              ))}
            </ul>
            {conversations.data?.items.length === 0 ? <p className="muted small">No conversation yet.</p> : null}
          </aside>
          <section className="card chat-main" aria-label="Conversation">
            {conversationId ? (
              <>
                <div className="chat-head">
                  <h2 className="mono">{conversationId}</h2>
                </div>
                <RefusalNote error={messages.error} title="Could not read the messages" />
                {items.length === 0 && (fresh || !messages.isPending) ? <EmptyState title="New conversation">Send the first message to start a run.</EmptyState> : null}
                <Thread messages={items} pending={working} />
                <Composer
                  definitionId={definitionId}
                  conversationId={conversationId}
                  detail={run.data}
                  attachable={acceptsAttachments(definition.data?.graph)}
                  onSent={() => {
                    // written to: the conversation is on the server now, read it
                    if (unwritten.delete(conversationId)) written();
                    void qc.invalidateQueries({ queryKey: keys.conversationRuns(conversationId) });
                    void qc.invalidateQueries({ queryKey: keys.messages(conversationId) });
                    void qc.invalidateQueries({ queryKey: ['conversations'] });
                  }}
                />
              </>
            ) : (
              <EmptyState title="Pick a conversation">Or start a new one.</EmptyState>
            )}
          </section>
          <aside className="card chat-run" aria-label="Bound run">
            <h2>Run</h2>
            {conversationId ? <RunCard detail={run.data} refusal={run.error ?? live.refusal} onSteered={() => void qc.invalidateQueries({ queryKey: keys.messages(conversationId) })} /> : <p className="muted small">—</p>}
          </aside>
        </div>
      ) : null}
    </div>
  );
}
