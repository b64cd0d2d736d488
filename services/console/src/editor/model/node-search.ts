/**
 * Finding a node by what the author remembers of it, pure: its key or its label, any case.
 * Best first: the key itself, then keys and labels that start with the query, then those
 * that hold it anywhere; ties keep the graph's order.
 */
export interface SearchableNode {
  key: string;
  label: string;
  kind: string;
}

/** Matches shown at most. */
export const NODE_SEARCH_LIMIT = 20;

function rank(n: SearchableNode, q: string): number | null {
  const key = n.key.toLowerCase();
  const label = n.label.toLowerCase();
  if (key === q || label === q) return 0;
  if (key.startsWith(q)) return 1;
  if (label.startsWith(q)) return 2;
  if (key.includes(q)) return 3;
  if (label.includes(q)) return 4;
  return null;
}

/** The nodes matching `query` (trimmed; empty matches every node), best first, at most `limit`. */
export function matchNodes(nodes: readonly SearchableNode[], query: string, limit = NODE_SEARCH_LIMIT): SearchableNode[] {
  const q = query.trim().toLowerCase();
  if (q === '') return nodes.slice(0, limit);
  return nodes
    .flatMap((n, i) => {
      const r = rank(n, q);
      return r === null ? [] : [{ n, r, i }];
    })
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.n);
}
