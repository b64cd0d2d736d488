/**
 * A gate's approval progress, said generically: an approval policy (quorums on a Pause) may put
 * a `quorums` (or `progress`) list in the gate's data — the blocker's details, the node's
 * answer, or under its `approval` / `gate` member. Each entry reads `name: have of need` when it
 * names numbers the usual way, else its members as JSON; nothing is shown when there is no list.
 * The console builds no policy UI: it shows what the API says. A Pause's approval policy (its
 * `approval` summary, approval-view.ts) shows each quorum with who counts toward it, who decided
 * through which path and when, and whether the signed-in key may still decide.
 */

import { Time } from '../ui/primitives';
import { approvalOf, membersText, pathText, type ApprovalView } from './approval-view';

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The progress list of a gate's data, or null. */
export function gateProgressOf(data: unknown): unknown[] | null {
  if (!isObj(data)) return null;
  for (const holder of [data, data.approval, data.gate]) {
    if (!isObj(holder)) continue;
    for (const member of ['quorums', 'progress'] as const) {
      const list = holder[member];
      if (Array.isArray(list) && list.length > 0) return list;
    }
  }
  return null;
}

/** One entry of the list: `name: have of need`, else its members as JSON. */
export function quorumText(q: unknown): string {
  if (!isObj(q)) return String(q);
  const name = typeof q.name === 'string' ? q.name : 'quorum';
  const have = [q.approvals, q.approved, q.count, q.have].find((v) => typeof v === 'number');
  const need = [q.min, q.need, q.required].find((v) => typeof v === 'number');
  return typeof have === 'number' && typeof need === 'number' ? `${name}: ${have} of ${need}` : `${name}: ${JSON.stringify(q)}`;
}

/** A policy gate's standing: each quorum with its members and progress, who decided, and whether the signed-in key may still decide. */
function ApprovalStanding({ approval }: { approval: ApprovalView }) {
  const v = approval.viewer;
  return (
    <div className="approval-standing">
      <ul className="quorums" aria-label="Quorum progress">
        {approval.quorums.map((q) => (
          <li key={q.name} className={`chip${q.met ? ' chip-accent' : ''}`} title={membersText(q)}>
            {q.name}: {q.approvals} of {q.min}
            {q.met ? ' ✓' : ''}
            <span className="muted"> · {membersText(q)}</span>
          </li>
        ))}
      </ul>
      {approval.decisions.length > 0 ? (
        <ul className="decisions small" aria-label="Decisions so far">
          {approval.decisions.map((d) => (
            <li key={d.principal}>
              <code>{d.principal}</code> {d.decision === 'Approve' ? 'approved' : 'rejected'} through {pathText(d.path)} <Time iso={d.at} />
              {d.comment ? <span className="muted"> — “{d.comment}”</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {v ? (
        <p className={`small ${v.canDecide ? 'viewer-can' : 'muted'}`} data-viewer-rule={v.rule ?? ''}>
          {v.canDecide ? `You (${v.principal}) may decide, counting toward ${v.quorums.join(', ')}.` : `You cannot decide (${v.rule}): ${v.message}`}
        </p>
      ) : null}
    </div>
  );
}

export function GateProgress({ gate }: { gate: unknown }) {
  const approval = approvalOf(gate);
  if (approval) return <ApprovalStanding approval={approval} />;
  const list = gateProgressOf(gate);
  if (!list) return null;
  return (
    <ul className="quorums" aria-label="Approval progress">
      {list.map((q, i) => (
        <li key={i} className="chip">
          {quorumText(q)}
        </li>
      ))}
    </ul>
  );
}
