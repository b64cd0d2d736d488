/**
 * docs/guides/agents.md cannot rot: its `bash` blocks run, in order, as one bash script
 * against a whole cluster (an LLM worker on its built-in scripted provider), and every `text`
 * block — the outputs the page shows — must appear in what they print.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, type E2eCluster } from '@flowline/testing';
import { REPO_ROOT, codeBlocks } from '../../scripts/docs/markdown-read';
import { runBash } from './run-bash';

const PAGE = 'docs/guides/agents.md';
const PAGE_URL = 'http://127.0.0.1:3000';

describe('the agents guide', () => {
  let c: E2eCluster;
  // inside the repository, so `npx flowline` finds the workspace's own command
  const workDir = join(REPO_ROOT, 'node_modules', '.cache', `flowline-agents-guide-${randomUUID()}`);

  beforeAll(async () => {
    mkdirSync(workDir, { recursive: true });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 1, llmWorkers: 1 });
  }, 90_000);

  afterAll(async () => {
    await c?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('runs every command of the page against a real cluster, and prints every output the page shows', async () => {
    const blocks = codeBlocks(PAGE, 'bash');
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll(PAGE_URL, c.cluster.apiUrl);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), FLOWLINE_URL: c.cluster.apiUrl };
    delete env.FLOWLINE_API_KEY;
    const { code, output } = await runBash(script, workDir, env, 100_000);
    expect(code, `the guide's commands failed:\n${output}`).toBe(0);
    const shown = codeBlocks(PAGE, 'text');
    expect(shown.length).toBeGreaterThanOrEqual(1);
    for (const text of shown) expect(output, `${PAGE} shows output its commands did not print`).toContain(text.trim());
  }, 120_000);
});
