/**
 * A Pause node's `approval` member: who may decide and how many of them it takes. Parsed here
 * once (at publish, and again by the policy function from the pinned config) into
 * {@link ApprovalPolicy} with durations in milliseconds.
 *
 * `{ quorums: [{ name, principals | scope | group, min }], approveRule, rejectRule, forbid,
 *   timeout?, onTimeout?, escalate?: [{ after, addQuorum }], notify?: [{ webhook }] }`
 */
import type { JsonObject } from '../model';
import { parseIsoDuration } from '../wait/wait-time';

/** Who counts toward a quorum: principals named one by one, holders of a key scope, or members of a group. */
export type QuorumMembers = { principals: string[] } | { scope: string } | { group: string };

export type ApprovalQuorum = { name: string; min: number } & QuorumMembers;

export const APPROVE_RULES = ['allQuorums', 'anyQuorum'] as const;
export const REJECT_RULES = ['any', 'quorum'] as const;
export const FORBID_RULES = ['initiator', 'definitionAuthor'] as const;
export const TIMEOUT_ACTIONS = ['reject', 'approve', 'escalate'] as const;
export type ApproveRule = (typeof APPROVE_RULES)[number];
export type RejectRule = (typeof REJECT_RULES)[number];
export type ForbidRule = (typeof FORBID_RULES)[number];
export type TimeoutAction = (typeof TIMEOUT_ACTIONS)[number];

export interface ApprovalPolicy {
  quorums: ApprovalQuorum[];
  approveRule: ApproveRule;
  rejectRule: RejectRule;
  forbid: ForbidRule[];
  /** from the gate's opening; null: no timeout */
  timeoutMs: number | null;
  timeout: string | null;
  onTimeout: TimeoutAction;
  /** each quorum joins the policy `afterMs` after the gate opened */
  escalate: Array<{ afterMs: number; after: string; addQuorum: ApprovalQuorum }>;
  notify: Array<{ webhook: string }>;
}

/** Most quorums (base plus escalations) and most principals one quorum may name. */
export const MAX_QUORUMS = 16;
export const MAX_QUORUM_PRINCIPALS = 100;
/** The longest timeout or escalation delay: 366 days, like a waitpoint token's. */
const MAX_APPROVAL_MS = 366 * 24 * 3600 * 1000;

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const NAME = /^[A-Za-z0-9_.:@-]{1,64}$/;
const PRINCIPAL = /^[^\s]{1,200}$/;

function parseQuorum(raw: unknown, at: string, errors: string[]): ApprovalQuorum | null {
  if (!isObj(raw)) {
    errors.push(`${at} must be an object { name, principals | scope | group, min }`);
    return null;
  }
  const start = errors.length;
  for (const k of Object.keys(raw)) if (!['name', 'principals', 'scope', 'group', 'min'].includes(k)) errors.push(`${at}: unknown member '${k}'`);
  if (typeof raw.name !== 'string' || !NAME.test(raw.name)) errors.push(`${at}.name must be 1–64 of A-Z a-z 0-9 _ . : @ -`);
  const given = (['principals', 'scope', 'group'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) errors.push(`${at} needs exactly one of principals, scope or group${given.length > 1 ? ` (given: ${given.join(', ')})` : ''}`);
  const min = raw.min;
  if (typeof min !== 'number' || !Number.isInteger(min) || min < 1) errors.push(`${at}.min must be a positive integer`);
  const members = given[0];
  if (members === 'principals') {
    const list = raw.principals;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_QUORUM_PRINCIPALS || !list.every((p) => typeof p === 'string' && PRINCIPAL.test(p))) {
      errors.push(`${at}.principals must be a list of 1–${MAX_QUORUM_PRINCIPALS} principal ids (no spaces)`);
    } else if (new Set(list).size !== list.length) errors.push(`${at}.principals lists a principal twice`);
    else if (typeof min === 'number' && min > list.length) errors.push(`${at}.min ${min} exceeds the ${list.length} principals it names: the quorum could never be met`);
  } else if (members !== undefined && (typeof raw[members] !== 'string' || !NAME.test(raw[members] as string))) {
    errors.push(`${at}.${members} must be a name (1–64 of A-Z a-z 0-9 _ . : @ -)`);
  }
  if (errors.length > start || members === undefined) return null;
  const base = { name: raw.name as string, min: min as number };
  if (members === 'principals') return { ...base, principals: raw.principals as string[] };
  return members === 'scope' ? { ...base, scope: raw.scope as string } : { ...base, group: raw.group as string };
}

function duration(raw: unknown, at: string, errors: string[]): number | null {
  if (typeof raw !== 'string') {
    errors.push(`${at} must be an ISO-8601 duration like PT1H or P2D`);
    return null;
  }
  const d = parseIsoDuration(raw);
  if ('error' in d) errors.push(`${at} ${d.error}`);
  else if (d.ms < 1000 || d.ms > MAX_APPROVAL_MS) errors.push(`${at} must be between 1 second and 366 days`);
  else return d.ms;
  return null;
}

function oneOf<T extends string>(raw: unknown, values: readonly T[], fallback: T, at: string, errors: string[]): T {
  if (raw === undefined) return fallback;
  if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return raw as T;
  errors.push(`${at} must be one of ${values.map((v) => `"${v}"`).join(', ')}`);
  return fallback;
}

function parseNotify(raw: unknown, errors: string[]): Array<{ webhook: string }> {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > 8) {
    errors.push('config.approval.notify must be a list of at most 8 { webhook } entries');
    return [];
  }
  return raw.flatMap((n, i) => {
    const url = isObj(n) ? n.webhook : undefined;
    if (!isObj(n) || Object.keys(n).some((k) => k !== 'webhook') || typeof url !== 'string' || !/^https?:\/\/[^\s]+$/.test(url)) {
      errors.push(`config.approval.notify.${i} must be { webhook: <absolute http(s) URL> }`);
      return [];
    }
    return [{ webhook: url }];
  });
}

/** The policy of a Pause config's `approval` member; null when there is none. */
export function approvalPolicyOf(config: JsonObject): { ok: true; policy: ApprovalPolicy | null } | { ok: false; errors: string[] } {
  const raw = config['approval'];
  if (raw === undefined || raw === null) return { ok: true, policy: null };
  const at = 'config.approval';
  if (!isObj(raw)) return { ok: false, errors: [`${at} must be an object { quorums, approveRule, rejectRule, forbid, timeout, onTimeout, escalate?, notify? }`] };
  const errors: string[] = [];
  const known = ['quorums', 'approveRule', 'rejectRule', 'forbid', 'timeout', 'onTimeout', 'escalate', 'notify'];
  for (const k of Object.keys(raw)) if (!known.includes(k)) errors.push(`${at}: unknown member '${k}'`);
  const quorums: ApprovalQuorum[] = [];
  if (!Array.isArray(raw.quorums) || raw.quorums.length === 0) errors.push(`${at}.quorums must be a non-empty list of quorums`);
  else raw.quorums.forEach((q, i) => {
    const parsed = parseQuorum(q, `${at}.quorums.${i}`, errors);
    if (parsed) quorums.push(parsed);
  });
  const approveRule = oneOf(raw.approveRule, APPROVE_RULES, 'allQuorums', `${at}.approveRule`, errors);
  const rejectRule = oneOf(raw.rejectRule, REJECT_RULES, 'any', `${at}.rejectRule`, errors);
  let forbid: ForbidRule[] = [];
  if (raw.forbid !== undefined) {
    if (!Array.isArray(raw.forbid) || !raw.forbid.every((f) => typeof f === 'string' && (FORBID_RULES as readonly string[]).includes(f))) {
      errors.push(`${at}.forbid must list some of "initiator", "definitionAuthor"`);
    } else forbid = [...new Set(raw.forbid as ForbidRule[])];
  }
  const timeoutMs = raw.timeout === undefined ? null : duration(raw.timeout, `${at}.timeout`, errors);
  const onTimeout = oneOf(raw.onTimeout, TIMEOUT_ACTIONS, 'reject', `${at}.onTimeout`, errors);
  if (raw.onTimeout !== undefined && raw.timeout === undefined) errors.push(`${at}.onTimeout needs a timeout`);
  const escalate: ApprovalPolicy['escalate'] = [];
  if (raw.escalate !== undefined) {
    if (!Array.isArray(raw.escalate) || raw.escalate.length === 0) errors.push(`${at}.escalate must be a non-empty list of { after, addQuorum }`);
    else raw.escalate.forEach((e, i) => {
      const eat = `${at}.escalate.${i}`;
      if (!isObj(e) || Object.keys(e).some((k) => k !== 'after' && k !== 'addQuorum')) return errors.push(`${eat} must be { after, addQuorum }`);
      const afterMs = duration(e.after, `${eat}.after`, errors);
      const q = parseQuorum(e.addQuorum, `${eat}.addQuorum`, errors);
      if (afterMs !== null && q) escalate.push({ afterMs, after: e.after as string, addQuorum: q });
    });
  }
  if (onTimeout === 'escalate' && raw.escalate === undefined) errors.push(`${at}.onTimeout "escalate" needs escalate steps to add`);
  const names = [...quorums, ...escalate.map((e) => e.addQuorum)].map((q) => q.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) errors.push(`${at}: quorum name '${dup}' is used twice`);
  if (names.length > MAX_QUORUMS) errors.push(`${at}: at most ${MAX_QUORUMS} quorums, escalations included`);
  const notify = parseNotify(raw.notify, errors);
  if (errors.length > 0) return { ok: false, errors };
  escalate.sort((a, b) => a.afterMs - b.afterMs);
  return {
    ok: true,
    policy: { quorums, approveRule, rejectRule, forbid, timeoutMs, timeout: typeof raw.timeout === 'string' ? raw.timeout : null, onTimeout, escalate, notify },
  };
}

/**
 * Error fragments (prefixed `config…`) for a Pause config's `approval`: the policy's own rules,
 * plus a timeout action the Pause cannot take (its decision must be among allowedDecisions).
 */
export function approvalConfigErrors(config: JsonObject): string[] {
  const r = approvalPolicyOf(config);
  if (!r.ok) return r.errors;
  const p = r.policy;
  const allowed = Array.isArray(config['allowedDecisions']) ? config['allowedDecisions'] : [];
  if (p && p.timeoutMs !== null && p.onTimeout !== 'escalate') {
    const d = p.onTimeout === 'approve' ? 'Approve' : 'Reject';
    if (!allowed.includes(d)) return [`config.approval.onTimeout "${p.onTimeout}" decides '${d}', which allowedDecisions does not offer`];
  }
  return [];
}
