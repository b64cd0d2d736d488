/**
 * docs/tutorial.md and the guides that walk through commands cannot rot: each page's `bash`
 * blocks run, in order, as one bash script against a whole cluster (the page's
 * `http://127.0.0.1:3000` replaced by this cluster's address), and every `text` block — the
 * outputs the page shows — must appear in what they print.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';
import { REPO_ROOT, codeBlocks } from '../../scripts/docs/markdown-read';

/** The pages run, with the fewest command blocks each must have. */
const PAGES = [
  { page: 'docs/tutorial.md', minBlocks: 5 },
  { page: 'docs/guides/waits.md', minBlocks: 4 },
];
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

describe('pages run as scripts', () => {
  let c: E2eCluster;
  // inside the repository, so `npx flowline` finds the workspace's own command
  const workDir = join(REPO_ROOT, 'node_modules', '.cache', `flowline-tutorial-${randomUUID()}`);

  beforeAll(async () => {
    mkdirSync(workDir, { recursive: true });
    // an LLM worker on its built-in scripted provider, for the summary of the five searches
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1 });
  }, 90_000);

  afterAll(async () => {
    await c?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it.each(PAGES)('runs every command of $page against a real cluster, and prints every output the page shows', async ({ page, minBlocks }) => {
    const blocks = codeBlocks(page, 'bash');
    expect(blocks.length).toBeGreaterThanOrEqual(minBlocks);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll(PAGE_URL, c.cluster.apiUrl);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), FLOWLINE_URL: c.cluster.apiUrl };
    delete env.FLOWLINE_API_KEY;
    const { code, output } = await runBash(script, workDir, env, 100_000);
    expect(code, `the commands of ${page} failed:\n${output}`).toBe(0);
    for (const shown of codeBlocks(page, 'text')) {
      expect(output, `${page} shows output its commands did not print`).toContain(shown.trim());
    }
  }, 120_000);
});
