/**
 * One chaos run end to end: private infrastructure and cluster up, workload and faults
 * in parallel, wait for every run to settle, then the invariants and the figures.
 */
import { startChaosCluster } from './chaos-cluster';
import { SHAPES, type Shape } from './graphs';
import { injectFaults, type FaultFigures, type PlannedKill } from './faults';
import { checkInvariants, observe, type Observations, type Violations } from './invariants';
import { startWorkload, type WorkloadFigures } from './workload';

export interface ChaosOptions {
  runs: number;
  /** the window over which runs are posted and faults injected, s */
  seconds: number;
  killEveryMs: number;
  /** the kills -9 in order, one per `killEveryMs` (absent = random picks for the whole window) */
  kills?: readonly PlannedKill[];
  /** the graph shapes mixed round-robin @default SHAPES (without `llm` when llmWorkers is 0) */
  shapes?: readonly Shape[];
  /** run on a 3-master Redis Cluster of its own instead of one redis-server (no Redis flush or restart then) @default false */
  redisCluster?: boolean;
  apis?: number;
  dispatchers?: number;
  toolWorkers?: number;
  /** @default 1 (0 leaves the `llm` shape out) */
  llmWorkers?: number;
  /** one-off faults as window fractions; null leaves one out */
  flushAt?: number | null;
  redisRestartAt?: number | null;
  pgRestartAt?: number | null;
  /** every run must be terminal this long after the last fault @default 60000 */
  terminalWithinMs?: number;
  /** progress lines */
  log?: (line: string) => void;
  /** every process output line */
  onLine?: (line: string) => void;
}

/** The SQL invariants, plus the process exits the harness did not cause (0 allowed). */
export type ChaosViolations = Violations & {
  /** exits other than a kill -9 the harness delivered (a crash, an exit by code, another signal) */
  unexpectedProcessExits: number;
};

export interface ChaosReport {
  options: ChaosOptions;
  workload: Omit<WorkloadFigures, 'posted'> & { postedRuns: number };
  faults: FaultFigures;
  unexpectedExits: Record<string, number>;
  exitLog: string[];
  observations: Observations;
  violations: ChaosViolations;
  totalViolations: number;
  elapsedMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  const t0 = Date.now();
  const terminalWithinMs = o.terminalWithinMs ?? 60_000;
  const windowMs = o.seconds * 1000;
  const llmWorkers = o.llmWorkers ?? 1;
  const c = await startChaosCluster({ apis: o.apis ?? 2, dispatchers: o.dispatchers ?? 3, toolWorkers: o.toolWorkers ?? 2, llmWorkers, onLine: o.onLine, redisCluster: o.redisCluster ?? false });
  log(`cluster up in ${Date.now() - t0} ms: ${c.apiUrls.length} API, ${c.killable.join(', ')}; Postgres :${c.pg.port}, Redis :${c.redis.port}`);
  try {
    const workload = await startWorkload({
      apiUrls: c.apiUrls,
      pool: c.pool,
      runs: o.runs,
      windowMs,
      shapes: o.shapes ?? (llmWorkers > 0 ? SHAPES : SHAPES.filter((s) => s !== 'llm')),
    });
    const faults = await injectFaults(c, {
      windowMs,
      killEveryMs: o.killEveryMs,
      ...(o.kills ? { kills: o.kills } : {}),
      flushAt: o.flushAt === undefined ? 0.3 : o.flushAt,
      redisRestartAt: o.redisRestartAt === undefined ? 0.55 : o.redisRestartAt,
      pgRestartAt: o.pgRestartAt === undefined ? 0.8 : o.pgRestartAt,
    });
    log(`faults done: ${faults.kills} kills, ${faults.flushes} flush, ${faults.redisRestarts} Redis restart, ${faults.pgRestarts} Postgres restart`);
    await workload.posted;
    log(`posted ${workload.figures.posted.length} runs (${workload.figures.postRetries} POST retries, ${workload.figures.postsAbandoned} abandoned)`);

    // Settle: every run terminal, or the deadline (plus a margin to measure how late) passed.
    const giveUpAt = faults.lastFaultAt + terminalWithinMs + 10_000;
    let live = -1;
    while (Date.now() < giveUpAt) {
      try {
        const r = await c.pool.query<{ n: number }>("select count(*)::int as n from runs where status not in ('Completed','Failed','Cancelled')");
        live = r.rows[0]!.n;
        if (live === 0) break;
      } catch {
        // the pool reconnects
      }
      await sleep(500);
    }
    workload.stop();
    log(live === 0 ? `all runs terminal ${Date.now() - faults.lastFaultAt} ms after the last fault` : `${live} runs still live at the deadline`);

    const violations: ChaosViolations = {
      ...(await checkInvariants(c.pool, workload.figures.posted, faults.lastFaultAt, terminalWithinMs)),
      unexpectedProcessExits: c.exits.total(),
    };
    const observations = await observe(c.pool, faults.lastFaultAt);
    const { posted, ...rest } = workload.figures;
    return {
      options: o,
      workload: { ...rest, postedRuns: posted.length },
      faults,
      unexpectedExits: Object.fromEntries(c.exits.unexpected),
      exitLog: [...c.exits.log],
      observations,
      violations,
      totalViolations: Object.values(violations).reduce((a, b) => a + b, 0),
      elapsedMs: Date.now() - t0,
    };
  } finally {
    await c.close();
  }
}

/** The report as printable lines. */
export function formatReport(r: ChaosReport): string {
  const lines = [
    `chaos: ${r.options.runs} runs over ${r.options.seconds} s, kill every ${r.options.killEveryMs} ms (elapsed ${(r.elapsedMs / 1000).toFixed(1)} s)`,
    `runs posted ${r.workload.postedRuns}, abandoned ${r.workload.postsAbandoned}, POST retries ${r.workload.postRetries}, cancels ${r.workload.cancelsSent}, decide 202s ${r.workload.decisionsSent}`,
    `statuses ${JSON.stringify(r.observations.statuses)}`,
    `faults: kill -9 ×${r.faults.kills} ${JSON.stringify(r.faults.killsByLabel)}, FLUSHALL ×${r.faults.flushes}, Redis restart ×${r.faults.redisRestarts}, Postgres restart ×${r.faults.pgRestarts}`,
    `unexpected process exits ${JSON.stringify(r.unexpectedExits)}`,
    ...r.exitLog.map((l) => `  ${l}`),
    `time to terminal: max ${r.observations.maxRunToTerminalMs} ms (p50 ${r.observations.p50RunToTerminalMs}, p99 ${r.observations.p99RunToTerminalMs}); longest wait to start ${r.observations.maxRunToStartMs} ms`,
    `last terminal ${r.observations.lastTerminalAfterLastFaultMs} ms after the last fault (limit ${r.options.terminalWithinMs ?? 60_000} ms)`,
    `interruptions ${r.observations.interruptions}, retries ${r.observations.retries}, effects ${r.observations.effects}, executions ${r.observations.executions} (re-executions ${r.observations.reExecutions})`,
    'violations:',
    ...Object.entries(r.violations).map(([k, v]) => `  ${k.padEnd(28)} ${v}`),
    `TOTAL VIOLATIONS ${r.totalViolations}`,
  ];
  return lines.join('\n');
}
