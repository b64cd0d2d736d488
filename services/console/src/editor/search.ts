/** The editor's URL: the definition or sample being edited (`new` forces a fresh blank one). */
export interface EditorSearch {
  definitionId?: string;
  sample?: string;
  new?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : undefined);

export function parseEditorSearch(s: Record<string, unknown>): EditorSearch {
  const out: EditorSearch = {};
  const d = str(s.definitionId);
  const sample = str(s.sample);
  const fresh = str(s.new);
  if (d) out.definitionId = d;
  if (sample) out.sample = sample;
  if (fresh) out.new = fresh;
  return out;
}
