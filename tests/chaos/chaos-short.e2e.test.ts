import { describe, expect, it } from 'vitest';
import { formatReport, runChaos } from './chaos';

describe('the short chaos run', () => {
  it('keeps every invariant while dispatchers and workers are killed and Redis is flushed', async () => {
    const lines: string[] = [];
    const report = await runChaos({
      runs: 200,
      seconds: 20,
      killEveryMs: 5000,
      flushAt: 0.5,
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
    expect(report.workload.postedRuns).toBe(200);
    expect(report.faults.kills).toBeGreaterThanOrEqual(3);
    expect(report.faults.flushes).toBe(1);
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
