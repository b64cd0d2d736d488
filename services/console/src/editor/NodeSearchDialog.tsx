/**
 * "Find a node" (Ctrl+K or /): a combobox over the graph's nodes by key or label
 * (model/node-search.ts); the arrow keys move through the matches, Enter or a click picks one,
 * and the caller jumps to it. For large graphs, where scrolling the canvas to find a node is slow;
 * used by the editor and the run graph.
 */
import { useId, useMemo, useState } from 'react';
import { Dialog } from '../ui/Dialog';
import { matchNodes, type SearchableNode } from './model/node-search';
import './node-search.css';

export function NodeSearchDialog({ nodes, onPick, onClose }: { nodes: readonly SearchableNode[]; onPick(key: string): void; onClose(): void }) {
  const id = useId();
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const matches = useMemo(() => matchNodes(nodes, query), [nodes, query]);
  const at = Math.min(active, Math.max(0, matches.length - 1));
  const optionId = (i: number) => `${id}-opt-${i}`;
  return (
    <Dialog title="Find a node" onClose={onClose}>
      <label htmlFor={`${id}-q`}>Key or label</label>
      <input
        id={`${id}-q`}
        className="node-search-input"
        role="combobox"
        aria-expanded={matches.length > 0}
        aria-controls={`${id}-list`}
        aria-autocomplete="list"
        aria-activedescendant={matches.length > 0 ? optionId(at) : undefined}
        autoComplete="off"
        autoFocus
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            const step = e.key === 'ArrowDown' ? 1 : -1;
            setActive((at + step + matches.length) % Math.max(1, matches.length));
          } else if (e.key === 'Enter') {
            e.preventDefault();
            const m = matches[at];
            if (m) onPick(m.key);
          }
        }}
      />
      <p className="muted small" role="status">
        {matches.length === 0 ? 'No node matches.' : `${matches.length} of ${nodes.length} nodes${matches.length < nodes.length ? ' match' : ''}.`}
      </p>
      <ul id={`${id}-list`} role="listbox" aria-label="Matching nodes" className="node-search-list">
        {matches.map((n, i) => (
          <li
            key={n.key}
            id={optionId(i)}
            role="option"
            aria-selected={i === at}
            className={`node-search-option${i === at ? ' is-active' : ''}`}
            data-node-key={n.key}
            onMouseEnter={() => setActive(i)}
            onClick={() => onPick(n.key)}
          >
            <span className="mono">{n.key}</span>
            {n.label !== n.key ? <span className="muted"> · {n.label}</span> : null}
            <span className="node-search-kind">{n.kind}</span>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}
