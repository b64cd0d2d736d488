/**
 * RFC 6902 JSON Patch between two JSON documents, for the audit log's record of a definition
 * change, with secret values redacted. Objects are compared member by member (remove, add,
 * replace at the member's pointer); arrays of the same length element by element, otherwise
 * replaced whole — applying the patch to the old document gives the new one.
 *
 * libs/graph declares no member that holds a secret (no credential or header members in its
 * schema); a graph's free-form parts (a tool's arguments, a node's config) may still carry one
 * under a telling name. So redaction goes by member name, the names the logger redacts
 * (libs/runtime REDACT_PATHS) plus `headers`, `cookie`, `secrets` and `*key*`-like names: the
 * value becomes `"[redacted]"`, the path is kept so the record still says what changed.
 */

/** One RFC 6902 operation (the subset a diff produces). */
export type PatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export const REDACTED = '[redacted]';
/** What an op's value reads as when the graph it came from is sealed at rest (see {@link patchForStorage}). */
export const SEALED = '[sealed]';

const SECRET_NAME = /^(password|passwd|token|accesstoken|refreshtoken|apikey|api_key|authorization|secret|secrets|clientsecret|headers|cookie|privatekey|signingkey|credentials?)$/i;

/** True when a member of this name holds a secret. */
export const isSecretMember = (name: string): boolean => SECRET_NAME.test(name);

const escapeToken = (t: string): string => t.replace(/~/g, '~0').replace(/\//g, '~1');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` with every secret member's value replaced by {@link REDACTED}. */
export function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSecretMember(k) ? REDACTED : redactValue(v)]));
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

function diffInto(ops: PatchOp[], path: string, a: unknown, b: unknown): void {
  if (sameJson(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(a)) if (!(k in b)) ops.push({ op: 'remove', path: `${path}/${escapeToken(k)}` });
    for (const [k, v] of Object.entries(b)) {
      const p = `${path}/${escapeToken(k)}`;
      if (!(k in a)) ops.push({ op: 'add', path: p, value: v });
      else diffInto(ops, p, a[k], v);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((x, i) => diffInto(ops, `${path}/${i}`, x, b[i]));
    return;
  }
  ops.push({ op: 'replace', path, value: b });
}

/** True when a pointer passes through a secret member. */
function pathHoldsSecret(path: string): boolean {
  return path.split('/').slice(1).some((t) => isSecretMember(t.replace(/~1/g, '/').replace(/~0/g, '~')));
}

/** The patch from `before` to `after`, secret values redacted (paths kept). */
export function jsonPatch(before: unknown, after: unknown): PatchOp[] {
  const ops: PatchOp[] = [];
  diffInto(ops, '', before, after);
  return ops.map((op) => (op.op === 'remove' ? op : { ...op, value: pathHoldsSecret(op.path) ? REDACTED : redactValue(op.value) }));
}

/**
 * The patch as the audit log stores it. With ENCRYPTION_KEY the definition's graph is sealed at
 * rest, but an audit row is hash-chained and so never re-sealed: it keeps each op and path (what
 * changed, where) and not the values (what the graph now says), which stay in the sealed
 * definition versions.
 */
export function patchForStorage(ops: PatchOp[], graphsSealed: boolean): PatchOp[] {
  return graphsSealed ? ops.map((op) => (op.op === 'remove' ? op : { ...op, value: SEALED })) : ops;
}
