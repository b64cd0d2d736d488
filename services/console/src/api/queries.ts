/**
 * Every read of the console, as TanStack Query hooks over `@flowline/client` (the console
 * never builds a URL). Keys are arrays rooted at the resource, so one invalidation of
 * `['run', runId]` refreshes everything about a run.
 */
import { replaceEqualDeep, useInfiniteQuery, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import type { AgentStepRead, AuditQuery, DefinitionSummary, FailureClass, FlowlineClient, Page, RunDetail } from '@flowline/client';
import { useClient } from '../session/session';
import { createdRangeOf, type RunsSearch } from '../app/search';
import { runEventLog } from '../live/run-events';

export const keys = {
  definitions: ['definitions'] as const,
  definition: (id: string) => ['definition', id] as const,
  runs: (f: RunsSearch) => ['runs', f] as const,
  run: (runId: string) => ['run', runId] as const,
  node: (runId: string, nodeKey: string) => ['run', runId, 'node', nodeKey] as const,
  events: (runId: string) => ['run', runId, 'events'] as const,
  conversations: (definitionId: string | undefined) => ['conversations', definitionId ?? null] as const,
  messages: (conversationId: string) => ['conversation', conversationId, 'messages'] as const,
  conversationRuns: (conversationId: string) => ['conversation', conversationId, 'runs'] as const,
  mcpServers: ['mcp-servers'] as const,
  agents: ['agents'] as const,
  agentVersions: (agentId: string) => ['agents', agentId, 'versions'] as const,
  inboundEvents: (name: string | undefined) => ['inbound-events', name ?? null] as const,
  inboundEvent: (eventId: string) => ['inbound-event', eventId] as const,
  webhooks: ['webhooks'] as const,
  webhookDeliveries: (hookId: string) => ['webhooks', hookId, 'deliveries'] as const,
  schedules: ['schedules'] as const,
  audit: (f: AuditQuery) => ['audit', f] as const,
  auditVerify: ['audit', 'verify'] as const,
  scheduleSlots: (scheduleId: string) => ['schedules', scheduleId, 'slots'] as const,
};

/** How often lists re-read while visible: a run changing status shows without a reload. */
export const LIST_POLL_MS = 3_000;

/** Definitions, page by page (newest first). */
export function useDefinitionPages() {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.definitions,
    queryFn: ({ pageParam }) => client.definitions.list({ limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** Up to 200 definitions by id (names for tables, filters and pickers), and whether they have been read (or the read failed). */
export function useDefinitionIndexState(): { index: Map<string, DefinitionSummary>; settled: boolean } {
  const client = useClient();
  const q = useQuery({
    queryKey: [...keys.definitions, 'index'],
    queryFn: () => client.definitions.list({ limit: 200 }),
    staleTime: 30_000,
  });
  return { index: new Map((q.data?.items ?? []).map((d) => [d.id, d])), settled: q.isFetched };
}

/** Up to 200 definitions by id (names for tables, filters and pickers). */
export function useDefinitionIndex(): Map<string, DefinitionSummary> {
  return useDefinitionIndexState().index;
}

/** One definition with its graph. */
export function useDefinition(id: string | undefined) {
  const client = useClient();
  return useQuery({ queryKey: keys.definition(id ?? ''), queryFn: () => client.definitions.get(id!), enabled: !!id, staleTime: 30_000 });
}

/** Runs, newest first, filtered, keyset-paged, re-read every {@link LIST_POLL_MS} while the page is visible. */
export function useRunPages(search: RunsSearch) {
  const client = useClient();
  // the days become the API's created range; the search text is the API's q
  const { from, to, ...filter } = search;
  const range = createdRangeOf({ from, to });
  return useInfiniteQuery({
    queryKey: keys.runs({ ...filter, ...(from ? { from } : {}), ...(to ? { to } : {}) }),
    queryFn: ({ pageParam }) =>
      client.runs.list({ ...filter, ...range, failureClass: filter.failureClass as FailureClass | undefined, limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIST_POLL_MS,
  });
}

/**
 * A re-read run detail shared with the one before: a run's pinned graph never changes (same
 * `graphHash`), so the earlier graph object is kept as it is instead of compared member by
 * member on every re-read (a 200-node graph on every ping), and the rest is shared where equal.
 */
export function shareRunDetail(previous: unknown, next: unknown): unknown {
  const prev = previous as RunDetail | undefined;
  const read = next as RunDetail;
  if (!prev || prev.run.graphHash !== read.run.graphHash) return replaceEqualDeep(prev, read);
  const { graph: _graph, ...rest } = read;
  const { graph, ...prevRest } = prev;
  const shared = replaceEqualDeep(prevRest, rest);
  // nothing changed: the very same object, so nothing re-renders
  return shared === prevRest ? prev : { ...shared, graph };
}

/**
 * A run with its node runs and pinned graph; `pollMs` while the live channel is down. Each
 * read lands with the live events after its `lastSeq` replayed over it (see
 * `live/run-events.ts`), so it never shows a node behind what the events already showed.
 */
export function useRunDetail(runId: string | undefined, pollMs: number | false) {
  const client = useClient();
  const qc = useQueryClient();
  return useQuery({
    queryKey: keys.run(runId ?? ''),
    queryFn: async () => runEventLog(qc).replayOver(runId!, await client.runs.get(runId!)),
    enabled: !!runId,
    refetchInterval: pollMs,
    structuralSharing: shareRunDetail,
  });
}

/** Starts reading run `runId` into `qc` before any page asks for it (the app's first render of a linked run view). */
export function prefetchRunDetail(qc: QueryClient, client: FlowlineClient, runId: string): void {
  void qc.prefetchQuery({ queryKey: keys.run(runId), queryFn: () => client.runs.get(runId) });
}

/** One node run with its documents and steering. */
export function useNodeDetail(runId: string | undefined, nodeKey: string | undefined, pollMs: number | false) {
  const client = useClient();
  return useQuery({
    queryKey: keys.node(runId ?? '', nodeKey ?? ''),
    queryFn: () => client.runs.node(runId!, nodeKey!),
    enabled: !!runId && !!nodeKey,
    refetchInterval: pollMs,
  });
}

/** Most transcript steps the node panel reads (ten pages of the API's largest): an Agent past it shows no results after. */
export const AGENT_TRANSCRIPT_MAX_STEPS = 1_000;

/**
 * An Agent node's transcript (tool results, model answers), every page up to
 * {@link AGENT_TRANSCRIPT_MAX_STEPS}. Read once per attempt of the node: a finished attempt's
 * steps do not change, and a retry's attempt reads anew.
 */
export function useAgentTranscript(runId: string, nodeKey: string, attempt: number, enabled: boolean) {
  const client = useClient();
  return useQuery({
    queryKey: [...keys.node(runId, nodeKey), 'agent-steps', attempt],
    queryFn: async () => {
      const steps: AgentStepRead[] = [];
      let cursor: string | null = null;
      do {
        const page: Page<AgentStepRead> = await client.runs.agentSteps(runId, nodeKey, { limit: 100, ...(cursor ? { cursor } : {}) });
        steps.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor !== null && steps.length < AGENT_TRANSCRIPT_MAX_STEPS);
      return steps;
    },
    enabled,
    staleTime: Infinity,
  });
}

/**
 * The run's events, paging forward from `afterSeq` 0: each page starts after the last seq
 * of the one before; a `truncated` page means newer events exist that are not loaded yet.
 */
export function useEventPages(runId: string | undefined, pollMs: number | false) {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.events(runId ?? ''),
    queryFn: ({ pageParam }) => client.runs.events(runId!, { afterSeq: pageParam }),
    initialPageParam: 0,
    getNextPageParam: (last, _all, lastParam) => (last.truncated ? (last.events.at(-1)?.seq ?? lastParam) : undefined),
    enabled: !!runId,
    refetchInterval: pollMs,
  });
}

/** What operators set on the run (breakpoints, edge overrides, an unconsumed step). */
export function useRunControls(runId: string | undefined, pollMs: number | false, enabled = true) {
  const client = useClient();
  return useQuery({
    queryKey: ['run', runId ?? '', 'controls'],
    queryFn: () => client.runs.controls(runId!),
    enabled: enabled && !!runId,
    refetchInterval: pollMs,
  });
}

/** Conversations, newest first (of one definition's bound runs when `definitionId` is given). */
export function useConversations(definitionId: string | undefined) {
  const client = useClient();
  return useQuery({
    queryKey: keys.conversations(definitionId),
    queryFn: () => client.conversations.list({ limit: 100, ...(definitionId ? { definitionId } : {}) }),
    refetchInterval: LIST_POLL_MS,
  });
}

/** The tenant's MCP servers, by name (one answer: the list is not paged). */
export function useMcpServers() {
  const client = useClient();
  return useQuery({ queryKey: keys.mcpServers, queryFn: () => client.mcpServers.list() });
}

/** Saved agents, page by page (by name). */
export function useAgentPages() {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.agents,
    queryFn: ({ pageParam }) => client.agents.list({ limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** Up to 200 saved agents (the editor's Agent picker). */
export function useAgentIndex() {
  const client = useClient();
  return useQuery({ queryKey: [...keys.agents, 'index'], queryFn: () => client.agents.list({ limit: 200 }), staleTime: 30_000 });
}

/** A saved agent's versions, newest first. */
export function useAgentVersions(agentId: string) {
  const client = useClient();
  return useQuery({ queryKey: keys.agentVersions(agentId), queryFn: () => client.agents.versions(agentId, { limit: 200 }) });
}

/** The tenant's schedules, page by page (newest first). */
export function useSchedulePages() {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.schedules,
    queryFn: ({ pageParam }) => client.schedules.list({ limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}

/** A schedule's next slots (with their UTC offsets) and the newest rows of its slot ledger. */
export function useScheduleSlots(scheduleId: string) {
  const client = useClient();
  const preview = useQuery({ queryKey: [...keys.scheduleSlots(scheduleId), 'preview'], queryFn: () => client.schedules.preview(scheduleId, 5) });
  const ledger = useQuery({ queryKey: keys.scheduleSlots(scheduleId), queryFn: () => client.schedules.slots(scheduleId, { limit: 50 }) });
  return { preview, ledger };
}

/** The tenant's inbound events (`GET /v1/events`), newest first, of one name when given; re-read every {@link LIST_POLL_MS}. */
export function useInboundEventPages(name: string | undefined) {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.inboundEvents(name),
    queryFn: ({ pageParam }) => client.events.list({ limit: 50, ...(name ? { name } : {}), ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIST_POLL_MS,
  });
}

/** One event with its data and each subscriber's verdict; re-read while its fan-out is still due. */
export function useInboundEvent(eventId: string | undefined) {
  const client = useClient();
  return useQuery({
    queryKey: keys.inboundEvent(eventId ?? ''),
    queryFn: () => client.events.get(eventId!),
    enabled: !!eventId,
    refetchInterval: (q) => (q.state.data?.fanout === 'due' ? LIST_POLL_MS : false),
  });
}

/** The tenant's inbound webhooks (one answer: the list is not paged). */
export function useWebhooks() {
  const client = useClient();
  return useQuery({ queryKey: keys.webhooks, queryFn: () => client.webhooks.list() });
}

/** A webhook's newest deliveries with their verdicts, re-read every {@link LIST_POLL_MS}. */
export function useWebhookDeliveries(hookId: string) {
  const client = useClient();
  return useQuery({ queryKey: keys.webhookDeliveries(hookId), queryFn: () => client.webhooks.deliveries(hookId, 50), refetchInterval: LIST_POLL_MS });
}
/** The tenant's audit log, newest first, page by page, with the rows not chained yet first. */
export function useAuditPages(filter: AuditQuery) {
  const client = useClient();
  return useInfiniteQuery({
    queryKey: keys.audit(filter),
    queryFn: ({ pageParam }) => client.audit.list({ ...filter, limit: 50, pending: pageParam === null, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
}
