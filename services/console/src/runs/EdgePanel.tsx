/**
 * The selected edge: where it goes, its condition in full, and (the `operate` scope) the
 * override that forces its verdict true or false, or clears it.
 */
import type { RunControls } from '@flowline/client';
import { conditionText } from '../graph/canvas';
import type { DocEdge } from '../definitions/graph-doc';
import { useCan } from '../session/session';
import { RefusalNote, SideHead } from '../ui/primitives';
import { useAct } from './acts';

export function EdgePanel({ runId, edge, controls, runLive, onClose }: { runId: string; edge: DocEdge; controls: RunControls | undefined; runLive: boolean; onClose(): void }) {
  const canOperate = useCan('operate');
  const override = useAct(runId, (c, operationId, verdict: boolean | null) => c.runs.overrideEdge(runId, edge.key, verdict, { idempotencyKey: operationId }));
  const current = controls?.edgeOverrides[edge.key];
  return (
    <aside className="side-panel card" aria-label={`Edge ${edge.key}`} data-edge-panel={edge.key}>
      <SideHead closeLabel="Close the edge panel" onClose={onClose}>
        <div className="muted small">Edge</div>
        <h2 className="mono">{edge.key}</h2>
      </SideHead>
      <dl className="facts">
        <div>
          <dt>From</dt>
          <dd className="mono">{edge.from}</dd>
        </div>
        <div>
          <dt>To</dt>
          <dd className="mono">{edge.to}</dd>
        </div>
        <div>
          <dt>Label</dt>
          <dd>{edge.label ?? <span className="muted">—</span>}</dd>
        </div>
        <div>
          <dt>Fires</dt>
          <dd className="mono small">{edge.condition ? conditionText(edge.condition) : edge.isDefault ? 'when no sibling fired' : 'always'}</dd>
        </div>
        <div>
          <dt>Override</dt>
          <dd>{current === undefined ? <span className="muted">none</span> : <strong>forced {String(current)}</strong>}</dd>
        </div>
      </dl>
      {canOperate && runLive ? (
        <section aria-label="Edge override">
          <h3>Override</h3>
          <div className="action-row">
            <button type="button" className="btn btn-sm" aria-pressed={current === true} disabled={override.pending} onClick={() => override.run(true)}>
              Force true
            </button>
            <button type="button" className="btn btn-sm" aria-pressed={current === false} disabled={override.pending} onClick={() => override.run(false)}>
              Force false
            </button>
            <button type="button" className="btn btn-sm btn-ghost" disabled={override.pending || current === undefined} onClick={() => override.run(null)}>
              Clear
            </button>
          </div>
          <RefusalNote error={override.error} title="Refused" />
        </section>
      ) : null}
    </aside>
  );
}
