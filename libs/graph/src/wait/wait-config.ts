/**
 * Parse-time rules of a Wait node's config beyond each member's own check: exactly one of
 * `for` / `until` / `signal` (the graph checks the channel is declared), a duration that parses, and an `until` that is a real timestamp or a
 * dot path (resolved when the node is reached).
 */
import { isValidPath } from '../conditions';
import type { JsonObject } from '../model';
import { looksLikeTimestamp, parseIsoDuration, parseTimestamp } from './wait-time';

/** Error fragments (prefixed `config…`) for a Wait node's parsed config. */
export function waitConfigErrors(config: JsonObject): string[] {
  const errors: string[] = [];
  const forText = config['for'];
  const until = config['until'];
  const given = (['for', 'until', 'signal'] as const).filter((m) => config[m] !== undefined);
  if (given.length === 0) errors.push('config needs one of for (a duration), until (a time) or signal (a channel) for Wait nodes');
  if (given.length > 1) errors.push(`config.${given.join(' and config.')} cannot be given together; give one`);
  if (typeof forText === 'string') {
    const d = parseIsoDuration(forText);
    if ('error' in d) errors.push(`config.for ${d.error}`);
  }
  if (typeof until === 'string') {
    if (looksLikeTimestamp(until)) {
      const t = parseTimestamp(until);
      if ('error' in t) errors.push(`config.until ${t.error}`);
    } else if (!isValidPath(until)) {
      errors.push(`config.until '${until}' is neither an RFC 3339 timestamp nor a dot path`);
    }
  }
  return errors;
}
