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
}

export const RUN_TABS = ['nodes', 'blockers', 'events', 'output'] as const;
export type RunTab = (typeof RUN_TABS)[number];

export interface RunSearch {
  runId?: string;
  nodeKey?: string;
  edgeKey?: string;
  tab?: RunTab;
}

export interface DefinitionsSearch {
  /** the definition whose "Start run" dialog is open */
  start?: string;
}

export interface ChatSearch {
  definitionId?: string;
  conversationId?: string;
}

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function parseRunsSearch(s: Record<string, unknown>): RunsSearch {
  return defined({ status: str(s.status), definitionId: str(s.definitionId), conversationId: str(s.conversationId) });
}

export function parseRunSearch(s: Record<string, unknown>): RunSearch {
  const tab = str(s.tab);
  return defined({
    runId: str(s.runId),
    nodeKey: str(s.nodeKey),
    edgeKey: str(s.edgeKey),
    tab: (RUN_TABS as readonly string[]).includes(tab ?? '') ? (tab as RunTab) : undefined,
  });
}

export function parseDefinitionsSearch(s: Record<string, unknown>): DefinitionsSearch {
  return defined({ start: str(s.start) });
}

export function parseChatSearch(s: Record<string, unknown>): ChatSearch {
  return defined({ definitionId: str(s.definitionId), conversationId: str(s.conversationId) });
}
