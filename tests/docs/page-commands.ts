/**
 * A documentation page whose commands run as a test: its `bash` blocks run, in order, as one
 * bash script against a whole cluster (the page's `http://127.0.0.1:3000` replaced by this
 * cluster's address; an LLM worker on its built-in scripted provider), and every `text`
 * block — the outputs the page shows — must appear in what they print.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';
import { REPO_ROOT, codeBlocks } from '../../scripts/docs/markdown-read';

const PAGE_URL = 'http://127.0.0.1:3000';

function runBash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Registers, inside a `describe`, the cluster hooks and the one test that runs `page`'s commands (at least `minBlocks` bash blocks). */
export function pageCommandsTest(page: string, minBlocks: number): void {
  let c: E2eCluster;
  // inside the repository, so `npx flowline` finds the workspace's own command
  const workDir = join(REPO_ROOT, 'node_modules', '.cache', `flowline-page-${randomUUID()}`);

  beforeAll(async () => {
    mkdirSync(workDir, { recursive: true });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1 });
  }, 90_000);

  afterAll(async () => {
    await c?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs every command of the page against a real cluster, and prints every output the page shows', async () => {
    const blocks = codeBlocks(page, 'bash');
    expect(blocks.length).toBeGreaterThanOrEqual(minBlocks);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll(PAGE_URL, c.cluster.apiUrl);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), FLOWLINE_URL: c.cluster.apiUrl };
    delete env.FLOWLINE_API_KEY;
    const { code, output } = await runBash(script, workDir, env, 100_000);
    expect(code, `the commands of ${page} failed:\n${output}`).toBe(0);
    const shown = codeBlocks(page, 'text');
    expect(shown.length).toBeGreaterThanOrEqual(1);
    for (const text of shown) expect(output, `${page} shows output its commands did not print`).toContain(text.trim());
  }, 120_000);
}
