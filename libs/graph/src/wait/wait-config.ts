/**
 * Parse-time rules of a Wait node's config beyond each member's own check: exactly one of
 * `for` / `until` / `signal` / `token` / `event` / `any` / `all` (the graph checks signal
 * channels are declared), durations that parse, an `until` that is a real timestamp or a dot
 * path (resolved when the node is reached), and composite arms that are well formed
 * (`wait-arms.ts`).
 */
import type { JsonObject } from '../model';
import { waitPlanOf } from './wait-arms';

/** Error fragments (prefixed `config…`) for a Wait node's parsed config. */
export function waitConfigErrors(config: JsonObject): string[] {
  const r = waitPlanOf(config);
  return r.ok ? [] : r.errors;
}

/** The signal channels a Wait config reads (its own `signal` and its arms'). */
export function waitSignalChannels(config: JsonObject): string[] {
  const r = waitPlanOf(config);
  if (!r.ok) return typeof config['signal'] === 'string' ? [config['signal']] : [];
  return r.plan.arms.flatMap((a) => (a.kind === 'signal' ? [a.channel] : []));
}
