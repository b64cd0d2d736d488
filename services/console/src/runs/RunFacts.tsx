/**
 * What a run carries besides its status: its metadata (each pair links to the runs list
 * filtered by it).
 */
import { Link } from '@tanstack/react-router';
import type { RunSummary } from '@flowline/client';

export function RunFacts({ run }: { run: RunSummary }) {
  const metadata = Object.entries(run.metadata ?? {});
  if (metadata.length === 0) return null;
  return (
    <div className="run-facts small" data-testid="run-facts">
      <span className="muted">Metadata</span>{' '}
      {metadata.map(([k, v]) => (
        <Link key={k} to="/runs" search={{ metadata: [`${k}:${v}`] }} className="chip chip-meta" title={`Runs with ${k}:${v}`}>
          {k}:{v}
        </Link>
      ))}
    </div>
  );
}
