/**
 * Every selection lives in the URL's search params, so each view is linkable and survives a
 * reload: the runs list's filters; the run view's run, node, edge and tab; the chat page's
 * definition and conversation. These read them back, dropping anything malformed.
 */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : undefined);

export interface RunsSearch {
  status?: string;
  definitionId?: string;
  conversationId?: string;
  failureClass?: string;
  /** metadata pairs `key:value`, each must be on the run */
  metadata?: string[];
  /** a run id (opens that run) or text matched against the listed runs' id, definition, reason and metadata */
  q?: string;
  /** first and last day created, `YYYY-MM-DD` in the viewer's time zone (both days included) */
  from?: string;
  to?: string;
}

/** A metadata pair as the runs filter takes it: `key:value` (the key holds no colon). */
export function parseMetadataPair(text: string): { key: string; value: string } | null {
  const at = text.indexOf(':');
  if (at <= 0) return null;
  const key = text.slice(0, at).trim();
  const value = text.slice(at + 1).trim();
  return key && value ? { key, value } : null;
}

const pairs = (v: unknown): string[] | undefined => {
  const list = (Array.isArray(v) ? v : [v]).map(str).filter((x): x is string => x !== undefined && parseMetadataPair(x) !== null);
  return list.length > 0 ? [...new Set(list)] : undefined;
};

const day = (v: unknown): string | undefined => {
  const t = str(v);
  return t && /^\d{4}-\d{2}-\d{2}$/.test(t) && !Number.isNaN(Date.parse(`${t}T00:00`)) ? t : undefined;
};

/**
 * The created range of the API's search from the list's days: `from`'s local midnight, and the
 * midnight after `to` (the API's `createdBefore` is exclusive, so the last day is included).
 */
export function createdRangeOf(s: Pick<RunsSearch, 'from' | 'to'>): { createdAfter?: string; createdBefore?: string } {
  const midnight = (d: string, plusDays = 0) => {
    const at = new Date(`${d}T00:00`);
    at.setDate(at.getDate() + plusDays);
    return at.toISOString();
  };
  return defined({ createdAfter: s.from ? midnight(s.from) : undefined, createdBefore: s.to ? midnight(s.to, 1) : undefined });
}

export const RUN_TABS = ['nodes', 'timeline', 'blockers', 'events', 'state', 'output'] as const;
export type RunTab = (typeof RUN_TABS)[number];

export interface RunSearch {
  runId?: string;
  nodeKey?: string;
  edgeKey?: string;
  tab?: RunTab;
  /** the State tab's chosen `state.updated` event */
  stateSeq?: number;
  /** 'timeline': the timeline and the events shown in a pane beside the graph */
  pane?: 'timeline';
}

export interface DefinitionsSearch {
  /** the definition whose "Start run" dialog is open */
  start?: string;
}

export interface EventsSearch {
  /** only events of this exact name */
  name?: string;
  /** the event whose detail is open */
  eventId?: string;
}

export interface ChatSearch {
  definitionId?: string;
  conversationId?: string;
}

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function parseRunsSearch(s: Record<string, unknown>): RunsSearch {
  return defined({
    status: str(s.status),
    definitionId: str(s.definitionId),
    conversationId: str(s.conversationId),
    failureClass: str(s.failureClass),
    metadata: pairs(s.metadata),
    q: str(s.q)?.trim() || undefined,
    from: day(s.from),
    to: day(s.to),
  });
}

const seqOf = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

export function parseRunSearch(s: Record<string, unknown>): RunSearch {
  const tab = str(s.tab);
  return defined({
    runId: str(s.runId),
    nodeKey: str(s.nodeKey),
    edgeKey: str(s.edgeKey),
    tab: (RUN_TABS as readonly string[]).includes(tab ?? '') ? (tab as RunTab) : undefined,
    stateSeq: seqOf(s.stateSeq),
    pane: s.pane === 'timeline' ? 'timeline' : undefined,
  });
}

export function parseDefinitionsSearch(s: Record<string, unknown>): DefinitionsSearch {
  return defined({ start: str(s.start) });
}

export function parseChatSearch(s: Record<string, unknown>): ChatSearch {
  return defined({ definitionId: str(s.definitionId), conversationId: str(s.conversationId) });
}

export function parseEventsSearch(s: Record<string, unknown>): EventsSearch {
  return defined({ name: str(s.name), eventId: str(s.eventId) });
}
