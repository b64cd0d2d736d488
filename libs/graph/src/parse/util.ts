import { isExactNumber } from '../conditions';
import type { Issue, Scalar } from '../model';

/** Node and edge key charset (CONTRACT §1.1). */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A plain JSON object (a lossless-parser JsonNumber is a number, not an object). */
export function isObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Own property (never inherited: `__proto__`, `toString`, … are not members). */
export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** Neither undefined nor null (CONTRACT §8: an optional member may be null = absent). */
export function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** string, boolean, null or a number — including the exact numbers of the lossless JSON parser (kept as they are). */
export function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || isExactNumber(v);
}

/** A positive safe integer. */
export function isPositiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

/** A short type name for messages. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'absent';
  if (isExactNumber(v)) return 'a number';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

const SEGMENT = /^[^.*[\]()\s]+$/;

/**
 * A dot path (`a.b.c`): one or more non-empty segments separated by `.`; no wildcards
 * (`*`), no indexing or calls (`[`, `]`, `(`, `)`), no whitespace, no JSONPath root `$`.
 * Returns null when valid, else the reason.
 */
export function dotPathError(v: unknown): string | null {
  if (typeof v !== 'string') return `must be a dot path string, not ${typeName(v)}`;
  if (v.length === 0) return 'must not be empty';
  const segments = v.split('.');
  for (const s of segments) {
    if (s.length === 0) return `'${v}' has an empty segment`;
    if (s === '$') return `'${v}' is a JSONPath, not a dot path`;
    if (/[*]/.test(s)) return `'${v}' uses a wildcard; dot paths have none`;
    if (/[[\]()]/.test(s)) return `'${v}' uses indexing or a call; dot paths have none`;
    if (!SEGMENT.test(s)) return `'${v}' contains whitespace`;
  }
  return null;
}

/** Quote a key for a message. */
export function q(s: string): string {
  return `'${s}'`;
}

/** Errors and warnings of one parse. */
export class Issues {
  readonly errors: Issue[] = [];
  readonly warnings: Issue[] = [];
  error(key: string | null, message: string): void {
    this.errors.push({ key, message });
  }
  warn(key: string | null, message: string): void {
    this.warnings.push({ key, message });
  }
}

/** "a, b, c and 2 more" — at most three named. */
export function listSome(items: readonly string[]): string {
  const shown = items.slice(0, 3).map(q).join(', ');
  return items.length > 3 ? `${shown} and ${items.length - 3} more` : shown;
}
