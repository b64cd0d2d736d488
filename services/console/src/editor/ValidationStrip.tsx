/**
 * The validation strip: the server's verdict on the current document. Errors (red) refuse
 * a save and are listed first; warnings (amber) are listed apart, under a title that asks
 * rather than refuses, and never block a save. Clicking an issue selects its element.
 */
import type { IssueIndex, PlacedIssue } from './model/issues';
import type { Selection } from './inspector/Inspector';
import { RefusalNote } from '../ui/primitives';

function IssueItem({ issue, select }: { issue: PlacedIssue; select(s: Selection): void }) {
  const target = issue.target === 'graph' ? null : ({ kind: issue.target, key: issue.key! } as const);
  return (
    <li>
      <button type="button" className={`issue is-${issue.level}`} onClick={() => select(target)} data-issue-key={issue.key ?? ''}>
        <span className="issue-key mono">{issue.key ?? 'graph'}</span>
        <span className="issue-message">{issue.message}</span>
      </button>
    </li>
  );
}

export function ValidationStrip({
  issues,
  validating,
  error,
  select,
  unavailable = null,
}: {
  issues: IssueIndex;
  validating: boolean;
  error: unknown;
  select(s: Selection): void;
  /** why this key gets no verdict (nothing is asked, nothing claimed) */
  unavailable?: string | null;
}) {
  const errors = issues.all.filter((i) => i.level === 'error');
  const warnings = issues.all.filter((i) => i.level === 'warning');
  if (unavailable !== null) {
    return (
      <section className="validation-strip" aria-label="Validation" data-state="unavailable">
        <div className="strip-head">
          <strong>Validation</strong>
          <span className="muted small">{unavailable}</span>
        </div>
      </section>
    );
  }
  return (
    <section className="validation-strip" aria-label="Validation" aria-live="polite" data-state={validating ? 'checking' : errors.length > 0 ? 'invalid' : 'valid'}>
      <div className="strip-head">
        <strong>Validation</strong>
        {validating ? <span className="muted small">checking…</span> : null}
        {!validating && errors.length === 0 ? <span className="strip-ok">No errors</span> : null}
        {errors.length > 0 ? <span className="strip-count is-error">{errors.length} error{errors.length === 1 ? '' : 's'}</span> : null}
        {warnings.length > 0 ? <span className="strip-count is-warning">{warnings.length} warning{warnings.length === 1 ? '' : 's'}</span> : null}
      </div>
      <RefusalNote error={error} title="Could not validate" />
      {errors.length > 0 ? (
        <ul className="issue-list" aria-label="Errors">
          {errors.map((i, n) => (
            <IssueItem key={`e${n}`} issue={i} select={select} />
          ))}
        </ul>
      ) : null}
      {warnings.length > 0 ? (
        <div className="warnings">
          <p className="warnings-title">Worth a look? These never block a save.</p>
          <ul className="issue-list" aria-label="Warnings">
            {warnings.map((i, n) => (
              <IssueItem key={`w${n}`} issue={i} select={select} />
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
