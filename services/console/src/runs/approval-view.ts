/**
 * A Pause's approval policy as its gate blocker answers it (`details.approval`): each quorum with
 * who counts toward it and its progress, the decisions with principal, path and time, and
 * `viewer` — whether the signed-in key's principal may still decide, else the rule that refuses
 * it. The rule itself lives in the API's pure policy function; this only reads its answer.
 */

export interface QuorumView {
  name: string;
  min: number;
  approvals: number;
  rejections: number;
  met: boolean;
  principals?: string[];
  scope?: string;
  group?: string;
  addedAt?: string;
}

export interface DecisionView {
  principal: string;
  decision: 'Approve' | 'Reject';
  path: 'rest' | 'console' | 'link' | 'timeout';
  comment: string | null;
  at: string;
}

export interface ViewerStanding {
  principal: string;
  canDecide: boolean;
  rule: string | null;
  message: string | null;
  quorums: string[];
}

export interface ApprovalView {
  status: 'pending' | 'approved' | 'rejected';
  quorums: QuorumView[];
  decisions: DecisionView[];
  nextAt: string | null;
  viewer?: ViewerStanding;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The approval of a gate blocker's details, or null (a gate without a policy). */
export function approvalOf(details: unknown): ApprovalView | null {
  if (!isObj(details) || !isObj(details.approval)) return null;
  const a = details.approval;
  if (!Array.isArray(a.quorums) || !Array.isArray(a.decisions)) return null;
  return a as unknown as ApprovalView;
}

/** Who counts toward a quorum, in words: "key:1, key:2", "scope run", "group finance". */
export function membersText(q: QuorumView): string {
  if (q.principals) return q.principals.join(', ');
  if (q.scope) return `keys with scope ${q.scope}`;
  if (q.group) return `group ${q.group}`;
  return '';
}

const PATHS: Record<DecisionView['path'], string> = { rest: 'the API', console: 'the console', link: 'a signed link', timeout: 'the timeout' };

/** How a decision came in, in words. */
export function pathText(path: DecisionView['path']): string {
  return PATHS[path] ?? path;
}

/**
 * Whether the signed-in key may still decide a gate: a policy gate says so itself (`viewer`);
 * a gate without a policy (a plain Pause, a chat question, a tool call) is decided by any key
 * holding the `run` scope.
 */
export function waitsForMe(details: unknown, canRun: boolean): boolean {
  const approval = approvalOf(details);
  if (approval?.viewer) return approval.viewer.canDecide;
  return canRun;
}
