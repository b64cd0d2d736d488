import { describe, expect, it } from 'vitest';
import { formatReport, runChaos } from './chaos';

describe('the short chaos run on a Redis Cluster', () => {
  it('brings every run to its terminal status with nothing lost when a dispatcher and a tool worker are killed mid-run', async () => {
    const lines: string[] = [];
    const report = await runChaos({
      runs: 20,
      seconds: 8,
      killEveryMs: 3000,
      // the only tool worker dies inside a 5 s call (the `slow` shape), the dispatcher with runs in flight
      shapes: ['retry', 'pause', 'fanout', 'cancel', 'slow'],
      kills: [{ label: 'dispatcher-1' }, { label: 'worker-tool-1', whileRunning: 'slow' }],
      redisCluster: true,
      apis: 1,
      dispatchers: 2,
      toolWorkers: 1,
      llmWorkers: 0,
      flushAt: null,
      redisRestartAt: null,
      pgRestartAt: null,
      log: (l) => lines.push(l),
      onLine: (l) => {
        lines.push(l);
        if (lines.length > 5000) lines.splice(0, 1000);
      },
    });
    const text = formatReport(report);
    if (report.totalViolations > 0) process.stdout.write(`${lines.slice(-80).join('\n')}\n${text}\n`);
    expect(report.workload.postedRuns).toBe(20);
    expect(report.faults.killsByLabel).toEqual({ 'dispatcher-1': 1, 'worker-tool-1': 1 });
    expect(report.faults.killsDuringCall).toBe(1);
    // the killed call came back Interrupted and was retried on the restarted worker
    expect(report.observations.interruptions).toBeGreaterThanOrEqual(1);
    // every shape ends Completed (a kill costs an Interrupted attempt, retried) or, for the cancel shape, Cancelled: none Failed
    const { Completed = 0, Cancelled = 0, ...others } = report.observations.statuses;
    expect(others).toEqual({});
    expect(Completed + Cancelled).toBe(20);
    expect(Completed).toBeGreaterThan(0);
    expect(report.violations).toEqual({
      runsLost: 0,
      runsNotTerminalInTime: 0,
      terminalTransitionsNotOne: 0,
      duplicateSeq: 0,
      seqGaps: 0,
      invocationStartedTwice: 0,
      duplicateNodeOutcomes: 0,
      effectsNotOnce: 0,
      unexpectedProcessExits: 0,
    });
  }, 170_000);
});
