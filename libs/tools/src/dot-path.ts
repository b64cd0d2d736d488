/**
 * Dot paths (`a.b.c`, CONTRACT §1.2): no wildcards, no indexing, no empty segment.
 * Resolution walks own members of plain objects only; arrays and scalars end it.
 */
import type { Json } from '@flowline/graph';

export type DotPathLookup = { found: true; value: Json } | { found: false };

/** true when `path` is a well-formed dot path. */
export function isDotPath(path: string): boolean {
  return path.length > 0 && path.split('.').every((segment) => segment.length > 0);
}

/** Looks `path` up in `root`; `{ found: false }` when any segment is missing or the path is malformed. */
export function resolveDotPath(root: Json | undefined, path: string): DotPathLookup {
  if (!isDotPath(path)) return { found: false };
  let current: Json | undefined = root;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return { found: false };
    if (!Object.hasOwn(current, segment)) return { found: false };
    current = current[segment];
  }
  return current === undefined ? { found: false } : { found: true, value: current };
}
