/**
 * The editor's undo history, pure: the states before the present (oldest first), the present,
 * and the states undone (nearest first). Recording a state equal to the present (by `same`:
 * the editor compares document texts, so a node's measured size or a selection is no step)
 * changes nothing; recording a new one drops what was undone. The past keeps at most `limit`
 * states, the oldest dropped first.
 */
export interface History<T> {
  past: readonly T[];
  present: T;
  future: readonly T[];
}

/** Undo steps kept by default. */
export const HISTORY_LIMIT = 100;

export function startHistory<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

/** `next` as the present, the old present one undo away (unless `same` says nothing changed). */
export function record<T>(h: History<T>, next: T, same: (a: T, b: T) => boolean, limit = HISTORY_LIMIT): History<T> {
  if (same(h.present, next)) return h;
  const past = [...h.past, h.present];
  return { past: past.length > limit ? past.slice(past.length - limit) : past, present: next, future: [] };
}

/** One step back (the same history when there is nothing to undo). */
export function undo<T>(h: History<T>): History<T> {
  const prev = h.past.at(-1);
  if (h.past.length === 0 || prev === undefined) return h;
  return { past: h.past.slice(0, -1), present: prev, future: [h.present, ...h.future] };
}

/** One undone step again (the same history when nothing was undone). */
export function redo<T>(h: History<T>): History<T> {
  const [next, ...rest] = h.future;
  if (h.future.length === 0 || next === undefined) return h;
  return { past: [...h.past, h.present], present: next, future: rest };
}

export const canUndo = (h: History<unknown>) => h.past.length > 0;
export const canRedo = (h: History<unknown>) => h.future.length > 0;
