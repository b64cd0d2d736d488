/**
 * infra/grafana/flowline-dashboard.json queries only metrics the processes export: each
 * `flowline_*` name is declared in the sources, each other name is a prom-client default
 * or the API's request histogram.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const PROM_CLIENT_DEFAULTS = ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds'];
const DECLARED_IN = ['services/dispatcher/src/ops.ts', 'services/dispatcher/src/metrics.ts', 'services/worker-llm/src/metrics.ts', 'services/api/src/metrics.ts'];

it('every metric the dashboard queries is exported by a Flowline process', () => {
  const dash = JSON.parse(readFileSync(join(rootDir, 'infra', 'grafana', 'flowline-dashboard.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  const sources = DECLARED_IN.map((f) => readFileSync(join(rootDir, f), 'utf8')).join('\n');
  const exprs = dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
  expect(exprs.length).toBeGreaterThan(5);
  for (const expr of exprs) {
    const names = [...expr.matchAll(/\b((?:flowline|process|nodejs|http)_[a-z0-9_]+?)(?:_bucket|_count|_sum)?\b(?=[{[)\s])/g)].map((m) => m[1]!);
    expect(names.length, expr).toBeGreaterThan(0);
    for (const name of names) {
      if (PROM_CLIENT_DEFAULTS.includes(name)) continue;
      // declared as prom-client options (`name: '…'`) or as the first argument of a metricsOn constructor
      const declared = new RegExp(`(name: |metric\\.(counter|histogram|gauge)\\(\\s*)'${name}'`);
      expect(sources, `${name} in ${expr}`).toMatch(declared);
    }
  }
});
