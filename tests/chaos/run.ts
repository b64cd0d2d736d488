/**
 * `npm run chaos`: the fault-injection suite on private Postgres and Redis.
 * Flags: --runs (2000) --seconds (90) --kill-every-ms (2000) --llm-workers (1) --json <file> --log <file>
 * (every process's output; default a file under the temp dir) --verbose (also to stdout)
 * --no-one-offs (no FLUSHALL / Redis restart / Postgres restart; with --kill-every-ms 0 a
 * fault-free baseline). Exits 1 when any invariant is violated; a process exit the harness
 * did not cause (anything but its own kill -9) is one.
 */
import { createWriteStream, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatReport, runChaos } from './chaos';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '90' },
    'kill-every-ms': { type: 'string', default: '2000' },
    'llm-workers': { type: 'string', default: '1' },
    json: { type: 'string' },
    log: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    'no-one-offs': { type: 'boolean', default: false },
  },
});

const num = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
  return n;
};

const logPath = values.log ?? join(tmpdir(), `flowline-chaos-${Date.now()}.log`);
const logFile = createWriteStream(logPath);
process.stdout.write(`[chaos] process output: ${logPath}\n`);

const report = await runChaos({
  runs: num('runs', values.runs),
  seconds: num('seconds', values.seconds),
  killEveryMs: num('kill-every-ms', values['kill-every-ms']),
  llmWorkers: num('llm-workers', values['llm-workers']),
  ...(values['no-one-offs'] ? { flushAt: null, redisRestartAt: null, pgRestartAt: null } : {}),
  log: (l) => process.stdout.write(`[chaos] ${l}\n`),
  onLine: (l) => {
    logFile.write(`${l}\n`);
    if (values.verbose) process.stdout.write(`${l}\n`);
  },
});
process.stdout.write(`${formatReport(report)}\n`);
for (const l of report.faults.log) process.stdout.write(`  ${l}\n`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
await new Promise<void>((resolve) => logFile.end(resolve));
const crashes = report.violations.unexpectedProcessExits;
if (crashes > 0) process.stdout.write(`${crashes} unexpected process exit(s): see the exit lines above and ${logPath}\n`);
process.exit(report.totalViolations === 0 ? 0 : 1);
