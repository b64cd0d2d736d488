/**
 * A verdict pill (an event subscriber's, a webhook delivery's): the API's word with the status
 * colours of ui/status.tsx, so "matched" reads like a succeeded node and "filterError" like a
 * failed one. `data-verdict` carries the word.
 */
import type { Tone } from './status';

const TONES: Record<string, Tone> = {
  matched: 'succeeded',
  verified: 'succeeded',
  notMatched: 'skipped',
  noMatch: 'skipped',
  duplicate: 'skipped',
  deferred: 'waiting',
  filterError: 'failed',
  refused: 'failed',
  badSignature: 'failed',
  stale: 'failed',
  tooLarge: 'failed',
};

const LABELS: Record<string, string> = {
  notMatched: 'not matched',
  filterError: 'filter error',
  noMatch: 'no match',
  badSignature: 'bad signature',
  tooLarge: 'too large',
};

export function VerdictBadge({ verdict }: { verdict: string }) {
  return (
    <span className={`badge badge-sm tone-${TONES[verdict] ?? 'pending'}`} data-verdict={verdict}>
      <span className="badge-dot" aria-hidden="true" />
      {LABELS[verdict] ?? verdict}
    </span>
  );
}
