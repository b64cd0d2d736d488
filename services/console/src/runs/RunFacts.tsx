/**
 * What a run carries besides its status: its priority when not the default, its model
 * usage against its budget (each limit with how much of it is spent), and its metadata
 * (each pair links to the runs list filtered by it).
 */
import { Link } from '@tanstack/react-router';
import type { RunBudget, RunSummary, RunUsage } from '@flowline/client';

/** The priority a run gets when its start names none. */
export const DEFAULT_PRIORITY = 3;

const n = (x: number) => x.toLocaleString('en-US');
const usd = (x: number) => `$${x < 0.01 && x > 0 ? x.toPrecision(2) : x.toFixed(2)}`;

function wallClock(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** One usage figure, with its limit and the share spent when the run has one. */
export interface UsageFact {
  key: 'tokens' | 'cost' | 'attempts' | 'wallClock';
  label: string;
  text: string;
  /** spent ÷ limit, when there is a limit */
  share?: number;
}

/** The run's usage facts in reading order: tokens, cost, attempts, then the wall-clock limit. */
export function usageFacts(usage: Pick<RunUsage, 'tokens' | 'costUsd' | 'unpricedTokens' | 'attempts'> | undefined, budget: RunBudget | null | undefined): UsageFact[] {
  const out: UsageFact[] = [];
  const b = budget ?? {};
  if (usage && (usage.tokens > 0 || b.maxTokens !== undefined)) {
    out.push({ key: 'tokens', label: 'Tokens', text: b.maxTokens !== undefined ? `${n(usage.tokens)} of ${n(b.maxTokens)}` : n(usage.tokens), ...(b.maxTokens ? { share: usage.tokens / b.maxTokens } : {}) });
  }
  if (usage && (usage.costUsd > 0 || b.maxCostUsd !== undefined)) {
    const unpriced = usage.unpricedTokens > 0 ? ` (+${n(usage.unpricedTokens)} unpriced tokens)` : '';
    out.push({ key: 'cost', label: 'Cost', text: `${b.maxCostUsd !== undefined ? `${usd(usage.costUsd)} of ${usd(b.maxCostUsd)}` : usd(usage.costUsd)}${unpriced}`, ...(b.maxCostUsd ? { share: usage.costUsd / b.maxCostUsd } : {}) });
  }
  if (usage && b.maxAttempts !== undefined) {
    out.push({ key: 'attempts', label: 'Attempts', text: `${n(usage.attempts)} of ${n(b.maxAttempts)}`, share: usage.attempts / b.maxAttempts });
  }
  if (b.maxWallClockMs !== undefined) out.push({ key: 'wallClock', label: 'Wall clock', text: `limit ${wallClock(b.maxWallClockMs)}` });
  return out;
}

export function RunFacts({ run }: { run: RunSummary }) {
  const metadata = Object.entries(run.metadata ?? {});
  const usage = usageFacts(run.usage, run.budget);
  const priority = run.priority !== undefined && run.priority !== DEFAULT_PRIORITY ? run.priority : undefined;
  if (metadata.length === 0 && usage.length === 0 && priority === undefined) return null;
  return (
    <div className="run-facts small" data-testid="run-facts">
      {priority !== undefined ? (
        <span className={`chip${priority > DEFAULT_PRIORITY ? ' chip-accent' : ''}`} data-priority={priority} title="Priority 1–5: higher runs first within the tenant">
          priority {priority}
        </span>
      ) : null}
      {usage.map((u) => (
        <span key={u.key} className={`usage-fact${u.share !== undefined && u.share >= 0.8 ? ' is-near' : ''}`} data-usage={u.key}>
          <span className="muted">{u.label}</span> {u.text}
          {u.share !== undefined ? <meter min={0} max={1} low={0.6} high={0.8} optimum={0} value={Math.min(1, u.share)} aria-label={`${u.label} spent of the budget`} /> : null}
        </span>
      ))}
      {metadata.length > 0 ? (
        <span className="run-facts-meta">
          <span className="muted">Metadata</span>{' '}
          {metadata.map(([k, v]) => (
            <Link key={k} to="/runs" search={{ metadata: [`${k}:${v}`] }} className="chip chip-meta" title={`Runs with ${k}:${v}`}>
              {k}:{v}
            </Link>
          ))}
        </span>
      ) : null}
    </div>
  );
}
