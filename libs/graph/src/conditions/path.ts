/**
 * Dot paths (CONTRACT §1.2): `a.b.c`, no wildcards, no indexing, no empty segment.
 */

/** Characters a path segment may not contain: wildcards and indexing brackets. */
const FORBIDDEN = /[*[\]]/;

/** Splits a dot path into segments, or null when it is not a valid path. */
export function splitPath(path: string): string[] | null {
  if (typeof path !== 'string' || path === '') return null;
  const segments = path.split('.');
  for (const s of segments) if (s === '' || FORBIDDEN.test(s)) return null;
  return segments;
}

/** True for a valid dot path (non-empty segments, no `*`, `[` or `]`). */
export function isValidPath(path: string): boolean {
  return splitPath(path) !== null;
}

/** True for a plain object: not null, not an array, prototype Object.prototype or null. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The outcome of {@link resolvePath}. */
export type PathResolution = { found: true; value: unknown } | { found: false };

const hasOwnEnumerable = (o: object, k: string): boolean => Object.prototype.propertyIsEnumerable.call(o, k);

/**
 * Walks `path` from `root` through own enumerable properties of plain objects only:
 * arrays are not indexed, inherited members (`toString`, `__proto__`) are never found,
 * class instances are opaque. An invalid path is never found. A found value may be
 * `null` or `undefined` (an own property holding it).
 */
export function resolvePath(root: unknown, path: string): PathResolution {
  const segments = splitPath(path);
  if (segments === null) return { found: false };
  let cur: unknown = root;
  for (const s of segments) {
    if (!isPlainObject(cur) || !hasOwnEnumerable(cur, s)) return { found: false };
    cur = cur[s];
  }
  return { found: true, value: cur };
}
