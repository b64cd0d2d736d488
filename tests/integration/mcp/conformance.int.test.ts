/**
 * Flowline's MCP client under the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`): for each client scenario that applies to Flowline the
 * suite starts its own scenario server, runs `conformance-client.ts` (the toolbox the workers
 * use) against it and judges the protocol exchange. Scenarios that do not apply (elicitation,
 * the OAuth flows) are listed in docs/guides/mcp-servers.md with the reason; one of them is run
 * here too, so the test shows the suite can fail this client (it declares no elicitation).
 *
 * The suite is pinned to 0.1.13: later releases need Node 22 (`fs.globSync`), and Flowline's
 * machines run Node 20.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const bin = fileURLToPath(new URL('../../../node_modules/.bin/conformance', import.meta.url));
const client = 'node --import tsx tests/integration/mcp/conformance-client.ts';

interface SuiteRun {
  code: number | null;
  output: string;
}

/** Runs one client scenario; the cwd is the repository so `--import tsx` resolves. */
function runScenario(scenario: string): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['client', '--command', client, '--scenario', scenario, '--timeout', '30000'], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The suite's closing line, e.g. `Passed: 3/3, 0 failed, 0 warnings`. */
function tally(output: string): { passed: number; total: number; failed: number; warnings: number } {
  const m = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(output);
  if (!m) throw new Error(`the conformance suite printed no tally:\n${output.slice(-2000)}`);
  return { passed: Number(m[1]), total: Number(m[2]), failed: Number(m[3]), warnings: Number(m[4]) };
}

describe('MCP conformance suite, client scenarios', () => {
  it.each([
    // connect, negotiate the protocol version, list the tools
    ['initialize', 1],
    // call a tool with typed arguments and read its text result
    ['tools_call', 1],
    // a call whose stream the server closes gracefully: reconnect via GET after `retry`, with Last-Event-ID
    ['sse-retry', 3],
  ])('%s passes every check', async (scenario, checks) => {
    const run = await runScenario(scenario);
    const t = tally(run.output);
    // a reconnect a little later than `retry` on a loaded machine is the suite's WARNING, not a failure
    expect({ total: t.total, judged: t.passed + t.warnings, failed: t.failed, code: run.code, overall: /OVERALL: PASSED/.test(run.output) }, run.output.slice(-3000)).toEqual({
      total: checks,
      judged: checks,
      failed: 0,
      code: 0,
      overall: true,
    });
  }, 60_000);

  it('fails a scenario that does not apply (elicitation: Flowline declares no such capability), so the suite can fail this client', async () => {
    const run = await runScenario('elicitation-sep1034-client-defaults');
    expect(run.code).not.toBe(0);
    expect(tally(run.output).failed).toBeGreaterThan(0);
  }, 60_000);
});
