/**
 * docs/tutorial.md cannot rot: its `bash` blocks run, in order, as one bash script against
 * a whole cluster (the page's `http://127.0.0.1:3000` replaced by this cluster's address),
 * and every `text` block — the outputs the page shows — must appear in what they print.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';
import { REPO_ROOT, codeBlocks } from '../../scripts/docs/markdown-read';
import { runBash } from './run-bash';

const PAGE = 'docs/tutorial.md';
const PAGE_URL = 'http://127.0.0.1:3000';

describe('the tutorial', () => {
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

  it('runs every command of the page against a real cluster, and prints every output the page shows', async () => {
    const blocks = codeBlocks(PAGE, 'bash');
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll(PAGE_URL, c.cluster.apiUrl);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), FLOWLINE_URL: c.cluster.apiUrl };
    delete env.FLOWLINE_API_KEY;
    const { code, output } = await runBash(script, workDir, env, 100_000);
    expect(code, `the tutorial's commands failed:\n${output}`).toBe(0);
    for (const shown of codeBlocks(PAGE, 'text')) {
      expect(output, `${PAGE} shows output its commands did not print`).toContain(shown.trim());
    }
  }, 120_000);
});
