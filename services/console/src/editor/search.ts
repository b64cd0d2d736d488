/**
 * The editor's URL: what is edited (a definition, an old version of it read-only, an old
 * version restored into the canvas, a sample, or `new` for a fresh blank one) and what is
 * shown (the selected node or edge, the side panel, two versions compared), so a reload or a shared link opens the
 * same view.
 */
export interface EditorSearch {
  definitionId?: string;
  /** a saved version of `definitionId`, shown read-only */
  version?: number;
  /** a saved version of `definitionId` loaded into the canvas as an unsaved change */
  restore?: number;
  sample?: string;
  new?: string;
  /** the selected node's key */
  node?: string;
  /** the selected edge's key (when no node is) */
  edge?: string;
  /** the side panel instead of the inspector */
  panel?: EditorPanel;
  /** with `diffTo`: two saved versions of `definitionId` compared side by side */
  diffFrom?: number;
  diffTo?: number;
}

export const EDITOR_PANELS = ['json', 'versions'] as const;
export type EditorPanel = (typeof EDITOR_PANELS)[number];

/** The search members that name what is edited: a change of one of them opens something else. */
export const IDENTITY_KEYS = ['definitionId', 'version', 'restore', 'sample', 'new'] as const;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : undefined);
const positive = (v: unknown): number | undefined => {
  const s = str(v);
  return s !== undefined && /^[1-9]\d{0,9}$/.test(s) ? Number(s) : undefined;
};

export function parseEditorSearch(s: Record<string, unknown>): EditorSearch {
  const out: EditorSearch = {};
  const d = str(s.definitionId);
  const sample = str(s.sample);
  const fresh = str(s.new);
  if (d) {
    out.definitionId = d;
    const version = positive(s.version);
    const restore = positive(s.restore);
    if (version !== undefined) out.version = version;
    else if (restore !== undefined) out.restore = restore;
    const diffFrom = positive(s.diffFrom);
    const diffTo = positive(s.diffTo);
    if (diffFrom !== undefined && diffTo !== undefined) Object.assign(out, { diffFrom, diffTo });
  }
  if (sample) out.sample = sample;
  if (fresh) out.new = fresh;
  const node = str(s.node);
  const edge = str(s.edge);
  if (node) out.node = node;
  else if (edge) out.edge = edge;
  const panel = str(s.panel);
  if (panel && (EDITOR_PANELS as readonly string[]).includes(panel)) out.panel = panel as EditorPanel;
  return out;
}

/** True when `a` and `b` name the same thing to edit (they may differ in selection or panel). */
export function sameEdited(a: EditorSearch, b: EditorSearch): boolean {
  return IDENTITY_KEYS.every((k) => a[k] === b[k]);
}
