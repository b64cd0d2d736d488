/**
 * Run metadata: string key/values given at a run's start, stored on the run
 * unencrypted (they are searchable: `metadata @> {...}` on a GIN index) and returned on its
 * summary. The pure rules: the key pattern and the bounds, checked with keyed issues.
 */
import type { Issue } from '../model';

/** A metadata key: 1–64 characters of letters, digits, `_`, `-`, `.`, starting with a letter or digit. */
export const METADATA_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Longest metadata key, characters (the pattern's bound). */
export const MAX_METADATA_KEY_CHARS = 64;

/** The bounds, from options (MAX_RUN_METADATA_KEYS, MAX_RUN_METADATA_VALUE_CHARS). */
export interface MetadataLimits {
  /** most keys on one run @default 16 */
  maxKeys: number;
  /** longest value, characters @default 256 */
  maxValueChars: number;
}

export const DEFAULT_METADATA_LIMITS: MetadataLimits = { maxKeys: 16, maxValueChars: 256 };

export type RunMetadata = Record<string, string>;

export type MetadataCheck = { ok: true; metadata: RunMetadata } | { ok: false; issues: Issue[] };

/** The refusal of one key, keyed `<at>.<key>` (the key cut to its first 64 characters). */
function keyIssue(at: string, key: string, message: string): Issue {
  return { key: `${at}.${key.slice(0, MAX_METADATA_KEY_CHARS)}`, message };
}

/** Why `key` is not a metadata key, or null. */
export function metadataKeyProblem(key: string): string | null {
  if (key.length === 0) return 'empty key';
  if (key.length > MAX_METADATA_KEY_CHARS) return `key longer than ${MAX_METADATA_KEY_CHARS} characters`;
  if (!METADATA_KEY_PATTERN.test(key)) return 'key must be letters, digits, _ - . (starting with a letter or digit)';
  return null;
}

/** Why `value` is not a metadata value under `limits`, or null. */
export function metadataValueProblem(value: unknown, limits: MetadataLimits): string | null {
  if (typeof value !== 'string') return 'value must be a string';
  if ([...value].length > limits.maxValueChars) return `value longer than ${limits.maxValueChars} characters`;
  if (value.includes('\u0000')) return 'value holds a NUL character';
  return null;
}

/**
 * Checks a run's metadata: a JSON object of string values, at most `maxKeys` keys, each key
 * matching {@link METADATA_KEY_PATTERN}, each value at most `maxValueChars` characters.
 * Undefined or null is no metadata (`{}`). Issues are keyed `metadata.<key>` (or `metadata`).
 */
export function checkRunMetadata(value: unknown, limits: MetadataLimits, at = 'metadata'): MetadataCheck {
  if (value === undefined || value === null) return { ok: true, metadata: {} };
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, issues: [{ key: at, message: 'must be an object of string values' }] };
  const entries = Object.entries(value as Record<string, unknown>);
  const issues: Issue[] = [];
  if (entries.length > limits.maxKeys) issues.push({ key: at, message: `${entries.length} keys, over MAX_RUN_METADATA_KEYS (${limits.maxKeys})` });
  const metadata: RunMetadata = {};
  for (const [key, v] of entries) {
    const problem = metadataKeyProblem(key) ?? metadataValueProblem(v, limits);
    if (problem !== null) issues.push(keyIssue(at, key, problem));
    else metadata[key] = v as string;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, metadata };
}
