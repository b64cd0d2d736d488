/**
 * The MCP servers and Agents pages in real headless Chromium against a real cluster and a real
 * MCP server (server-everything over streamable HTTP): register a server, test its connection
 * (its tools listed), edit it; create a saved agent naming one of its tools, save a second
 * version, read the first one back in the history; reached from the navigation by keyboard,
 * dialogs closed with Escape; axe-core finds no serious or critical violation on either page.
 * Screenshots: services/console/artifacts/mcp-servers*.png, agents*.png.
 */
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { spawnService, type ServiceProcess } from '@flowline/testing';
import {
  KEYS,
  closeAfterFile,
  openConsolePage,
  screenshot,
  seriousViolations,
  signIn,
  startConsoleCluster,
  type ConsoleCluster,
} from './console-cluster';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Opens a section from the navigation with the keyboard (focus its link, Enter). */
async function openSection(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: label }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: label, level: 1 }).waitFor();
}

describe('the MCP servers and Agents pages', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let page: Page;
  let mcp: ServiceProcess;
  let mcpUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    const entry = join(
      dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
      'dist',
      'index.js',
    );
    mcp = await spawnService({
      cwd: process.cwd(),
      env: { PORT: String(port) },
      args: [entry, 'streamableHttp'],
      readyText: `listening on port ${port}`,
    });
    mcpUrl = `http://127.0.0.1:${port}/mcp`;
    c = await startConsoleCluster({ env: { MCP_ALLOWED_HOSTS: '127.0.0.1' } });
    ({ browser, page } = await openConsolePage());
    await signIn(page, c.baseUrl, KEYS.admin);
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));
  afterAll(async () => {
    mcp?.child.kill('SIGTERM');
    await mcp?.exited;
  });

  it('registers an MCP server, lists its tools in a connection test, and edits it', async () => {
    await openSection(page, 'MCP servers');
    await page.getByRole('button', { name: 'Register server' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register an MCP server' });
    await dialog.getByLabel('Name').fill('everything');
    await dialog.getByLabel('URL').fill(mcpUrl);
    await dialog.getByRole('button', { name: 'Register' }).click();
    const row = page.locator('tr[data-server-name="everything"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('v1');

    await page.getByRole('button', { name: 'Test connection to everything' }).click();
    const test = page.getByRole('dialog', { name: 'Test connection: everything' });
    await test
      .getByRole('status')
      .filter({ hasText: /Connected: \d+ tools offered/ })
      .waitFor({ timeout: 30_000 });
    await test.getByText('mcp:everything/echo', { exact: true }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'mcp-servers-test');
    await page.keyboard.press('Escape');
    await test.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Edit everything' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit everything' });
    await edit.getByLabel('Timeout per call (ms)').fill('20000');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    await page.locator('tr[data-server-name="everything"]', { hasText: 'v2' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'mcp-servers');
  }, 90_000);

  it('creates a saved agent, saves a second version, and shows the first in its history', async () => {
    await openSection(page, 'Agents');
    await page.getByRole('button', { name: 'New agent' }).click();
    const create = page.getByRole('dialog', { name: 'New agent' });
    await create.getByLabel('Name').fill('researcher');
    await create.getByLabel('Instructions').fill('Find the answer with the tools.');
    await create.getByLabel('Tools').fill('echo\nmcp:everything/echo');
    await create.getByLabel('Max iterations').fill('4');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agents-new');
    await create.getByRole('button', { name: 'Create' }).click();
    await create.waitFor({ state: 'detached' });
    await page.locator('tr[data-agent-name="researcher"]', { hasText: 'v1' }).waitFor();

    await page.getByRole('button', { name: 'Edit researcher' }).click();
    const edit = page.getByRole('dialog', { name: /Edit researcher \(saves version 2\)/ });
    await edit.getByLabel('Instructions').fill('Find the answer, then cite the tool.');
    await edit.getByRole('button', { name: 'Save version' }).click();
    await edit.waitFor({ state: 'detached' });
    await page.locator('tr[data-agent-name="researcher"]', { hasText: 'v2' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agents');

    await page.getByRole('button', { name: 'History of researcher' }).click();
    const history = page.getByRole('dialog', { name: 'History of researcher' });
    await history.getByText('Find the answer, then cite the tool.').waitFor();
    await history.getByRole('button', { name: /^v1 ·/ }).click();
    await history.getByText('Find the answer with the tools.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'agents-history');
    await page.keyboard.press('Escape');
    await history.waitFor({ state: 'detached' });

    const saved = await c.admin.agents.list();
    expect(saved.items).toEqual([
      expect.objectContaining({
        name: 'researcher',
        version: 2,
        tools: ['echo', 'mcp:everything/echo'],
        maxIterations: 4,
      }),
    ]);
  }, 90_000);
});
