/** A JSON document, collapsible, monospace, with a copy button (react-json-view-lite). */
import { useState } from 'react';
import { JsonView, allExpanded, collapseAllNested, defaultStyles } from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';

// the library's number (#0b75f5) and boolean greens fall under WCAG AA contrast on white: ours are darker
const STYLE = { ...defaultStyles, container: 'json-view', basicChildStyle: 'json-row', numberValue: 'json-number', booleanValue: 'json-boolean' };

/** `expandAll` opens every nested member (small documents read whole, such as a run state); by default only the top level is open. */
export function JsonDoc({ title, value, open = true, emptyText = 'null', expandAll = false }: { title: string; value: unknown; open?: boolean; emptyText?: string; expandAll?: boolean }) {
  const [copied, setCopied] = useState(false);
  const isObject = value !== null && typeof value === 'object';
  return (
    <div className="json-doc">
      <button
        type="button"
        className="icon-button json-copy"
        aria-label={`Copy ${title} as JSON`}
        onClick={() => {
          void navigator.clipboard?.writeText(JSON.stringify(value, null, 2)).then(() => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1200);
          });
        }}
      >
        {copied ? 'copied' : 'copy'}
      </button>
      <details open={open}>
        <summary>
          <span className="json-doc-title">{title}</span>
        </summary>
        <div className="json-doc-body">
          {isObject ? (
            <JsonView data={value as object} shouldExpandNode={expandAll ? allExpanded : collapseAllNested} style={STYLE} aria-label={title} />
          ) : (
            <pre className="json-scalar">{value === undefined || value === null ? emptyText : JSON.stringify(value, null, 2)}</pre>
          )}
        </div>
      </details>
    </div>
  );
}
