/** Plain-text rendering: aligned tables, `key  value` blocks, event lines, keyed issues. */

export type Cell = string | number | boolean | null | undefined;

function cell(v: Cell): string {
  return v === null || v === undefined || v === '' ? '-' : String(v);
}

/** An aligned table with an upper-case header row; empty input prints the header only. */
export function table(headers: string[], rows: Cell[][]): string {
  const text = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map(cell))];
  const widths = headers.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length)));
  return text.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

/** `label  value` lines, labels aligned. */
export function fields(pairs: Array<[string, Cell]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n') + '\n';
}

/** Compact JSON on one line (for values inside human output). */
export const compact = (v: unknown): string => JSON.stringify(v) ?? 'null';

/** Indented JSON with a trailing newline (`--json` output). */
export const pretty = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** Width the kind column of event lines is padded to (`node.completed` and most others fit). */
const EVENT_KIND_WIDTH = 14;

/** One event: `seq  at  kind  nodeKey|-  [detail]`. */
export function eventLine(e: { seq: number; kind: string; nodeKey: string | null; at: string; detail?: unknown }): string {
  const detail = e.detail === undefined || e.detail === null || (typeof e.detail === 'object' && Object.keys(e.detail).length === 0) ? '' : `  ${compact(e.detail)}`;
  return `${String(e.seq).padStart(4)}  ${e.at}  ${e.kind.padEnd(EVENT_KIND_WIDTH)}  ${e.nodeKey ?? '-'}${detail}`;
}

/** A contract issue `{ key, message }` as `key: message` (`(graph)` for a null key); anything else as JSON. */
export function issueLine(issue: unknown): string {
  if (issue && typeof issue === 'object' && 'message' in issue) {
    const i = issue as { key?: unknown; path?: unknown; message: unknown };
    const where = i.key !== undefined ? i.key : Array.isArray(i.path) ? i.path.join('.') : i.path;
    return `${where === null || where === undefined || where === '' ? '(graph)' : String(where)}: ${String(i.message)}`;
  }
  return compact(issue);
}
