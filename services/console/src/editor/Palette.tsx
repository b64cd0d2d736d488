/**
 * The palette: every node kind, grouped, with its one-line summary. Drag a kind onto the
 * canvas, or click it (or press Enter on it) to add it beside the selection.
 */
import {
  NODE_KIND_GROUPS,
  NODE_KIND_SPECS,
  NODE_KINDS,
  type NodeKind,
  type NodeKindGroup,
} from '@flowline/graph';

/** The drag payload type of a palette entry. */
export const PALETTE_MIME = 'application/x-flowline-node-kind';

const GROUP_TITLES: Record<NodeKindGroup, string> = {
  flow: 'Flow',
  model: 'Models',
  tool: 'Tools',
  human: 'People',
  child: 'Child runs',
};

export function Palette({
  onAdd,
  chat,
  disabled = false,
}: {
  onAdd(kind: NodeKind): void;
  chat: boolean;
  disabled?: boolean;
}) {
  return (
    // The list scrolls, so it is focusable itself: when the editor is read-only its buttons are
    // disabled (the fieldset inside, not around it: a disabled fieldset would take the list's own
    // focus too), and a keyboard user must still be able to scroll through the kinds.
    <nav className="palette" aria-label="Node palette" tabIndex={0}>
      <fieldset className="palette-fieldset" disabled={disabled}>
        {NODE_KIND_GROUPS.map((g) => (
          <section key={g} className="palette-group" aria-label={GROUP_TITLES[g]}>
            <h3>{GROUP_TITLES[g]}</h3>
            <ul>
              {NODE_KINDS.filter((k) => NODE_KIND_SPECS[k].group === g).map((k) => {
                const spec = NODE_KIND_SPECS[k];
                const off = spec.chatOnly && !chat;
                return (
                  <li key={k}>
                    <button
                      type="button"
                      className={`palette-item group-${g}${off ? ' is-off' : ''}`}
                      draggable
                      onDragStart={(e) => {
                        e.dataTransfer.setData(PALETTE_MIME, k);
                        e.dataTransfer.effectAllowed = 'copy';
                      }}
                      onClick={() => onAdd(k)}
                      title={`${spec.summary}${off ? ' (Chat graphs only)' : ''}`}
                      aria-label={`Add ${k}`}
                      data-kind={k}
                    >
                      <span className="palette-dot" aria-hidden="true" />
                      {k}
                    </button>
                  </li>
                );
              })}
            </ul>
          </section>
        ))}
      </fieldset>
    </nav>
  );
}
