/**
 * Deterministic Mermaid and Graphviz DOT renderings of a parsed graph. Node ids are
 * synthetic (`n0`, `n1`, … in document order), never raw keys; every label is escaped so
 * no character of it (quotes, brackets, pipes, newlines, backslashes, `<>`, …) can end
 * the string it sits in.
 */
import { stringifyJsonExact } from '../conditions/exact-json';
import type { EdgeCondition, Graph, GraphEdge, GraphNode } from '../model';

/** The text an edge shows: its label, else its condition, else `default` for a default edge. */
export function edgeText(e: GraphEdge): string | null {
  if (e.label !== null && e.label !== '') return e.label;
  if (e.condition !== null) return conditionText(e.condition);
  return e.default ? 'default' : null;
}

export function conditionText(c: EdgeCondition): string {
  return c.op === 'Exists' || c.op === 'NotExists' ? `${c.path} ${c.op}` : `${c.path} ${c.op} ${stringifyJsonExact(c.value)}`;
}

function nodeText(n: GraphNode): string {
  return n.label === n.key ? `${n.label} (${n.kind})` : `${n.label} (${n.kind}: ${n.key})`;
}

function ids(graph: Graph): Map<string, string> {
  return new Map(graph.nodes.map((n, i) => [n.key, `n${i}`] as const));
}

/**
 * Mermaid string content: everything but ASCII letters, digits, space and `_.,:-` becomes
 * an entity code (`#34;`), which Mermaid decodes only after parsing the syntax.
 */
export function mermaidEscape(s: string): string {
  let out = '';
  for (const ch of s) out += /^[A-Za-z0-9 _.,:-]$/.test(ch) ? ch : `#${ch.codePointAt(0)!};`;
  return out;
}

const MERMAID_SHAPES: Partial<Record<GraphNode['kind'], [string, string]>> = {
  Start: ['(["', '"])'],
  End: ['(["', '"])'],
  Condition: ['{"', '"}'],
  DecisionModel: ['{{"', '"}}'],
  Pause: ['[/"', '"/]'],
  ChatInput: ['[/"', '"/]'],
  Parallel: ['[["', '"]]'],
  Join: ['[["', '"]]'],
};

/** Mermaid flowchart (left to right). */
export function toMermaid(graph: Graph): string {
  const id = ids(graph);
  const lines = ['flowchart LR'];
  for (const n of graph.nodes) {
    const [open, close] = MERMAID_SHAPES[n.kind] ?? ['["', '"]'];
    lines.push(`  ${id.get(n.key)!}${open}${mermaidEscape(nodeText(n))}${close}`);
  }
  for (const e of graph.edges) {
    const from = id.get(e.from);
    const to = id.get(e.to);
    if (from === undefined || to === undefined) continue;
    const arrow = e.default ? '-.->' : '-->';
    const text = edgeText(e);
    lines.push(text === null ? `  ${from} ${arrow} ${to}` : `  ${from} ${arrow}|"${mermaidEscape(text)}"| ${to}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * DOT double-quoted string content: backslash and quote escaped, line breaks as `\n`,
 * other control characters dropped to a space.
 */
export function dotEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (isControl(ch.codePointAt(0)!)) out += ' ';
    else out += ch;
  }
  return out;
}

function isControl(c: number): boolean {
  return c < 0x20 || c === 0x7f || c === 0x2028 || c === 0x2029;
}

const DOT_SHAPES: Partial<Record<GraphNode['kind'], string>> = {
  Start: 'oval',
  End: 'doubleoctagon',
  Condition: 'diamond',
  DecisionModel: 'hexagon',
  Pause: 'parallelogram',
  ChatInput: 'parallelogram',
  Parallel: 'trapezium',
  Join: 'invtrapezium',
};

/** Graphviz DOT digraph (left to right). */
export function toDot(graph: Graph): string {
  const id = ids(graph);
  const lines = ['digraph flowline {', '  rankdir=LR;', '  node [shape=box, fontname="Helvetica"];'];
  for (const n of graph.nodes) {
    const shape = DOT_SHAPES[n.kind] ?? 'box';
    lines.push(`  ${id.get(n.key)!} [label="${dotEscape(nodeText(n))}", shape=${shape}];`);
  }
  for (const e of graph.edges) {
    const from = id.get(e.from);
    const to = id.get(e.to);
    if (from === undefined || to === undefined) continue;
    const attrs: string[] = [];
    const text = edgeText(e);
    if (text !== null) attrs.push(`label="${dotEscape(text)}"`);
    if (e.default) attrs.push('style=dashed');
    lines.push(`  ${from} -> ${to}${attrs.length > 0 ? ` [${attrs.join(', ')}]` : ''};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
