/**
 * The console against a whole real cluster, for the browser tests and the benchmark: the
 * e2e harness's processes (API, dispatchers, tool worker) on a private database and Redis,
 * with API keys (an admin key and a read-only key of one tenant), the console built first,
 * and helpers to sign in, check accessibility with axe-core and save screenshots.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createClient, type FlowlineClient } from '@flowline/client';
import { startE2eCluster, type E2eCluster, ensureConsoleBuilt } from '@flowline/testing';
import { launchChromium } from './browser';

export const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const artifactsDir = join(rootDir, 'services', 'console', 'artifacts');

export const KEYS = { admin: 'k-console-admin', read: 'k-console-read' } as const;

export interface ConsoleCluster {
  e2e: E2eCluster;
  baseUrl: string;
  /** the admin key's client */
  admin: FlowlineClient;
  close(): Promise<void>;
}

export interface ConsoleClusterOptions {
  env?: Record<string, string>;
  dispatchers?: number;
  llmWorkers?: number;
}

/** Builds the console when needed, then starts the cluster with the console's keys. */
export async function startConsoleCluster(o: ConsoleClusterOptions = {}): Promise<ConsoleCluster> {
  await ensureConsoleBuilt(rootDir);
  const files = mkdtempSync(join(tmpdir(), 'flowline-console-'));
  writeFileSync(join(files, 'notes.md'), '# notes\nall good\n');
  const e2e = await startE2eCluster({
    dispatchers: o.dispatchers ?? 1,
    ...(o.llmWorkers ? { llmWorkers: o.llmWorkers } : {}),
    env: { API_KEYS: `acme:${KEYS.admin},acme:${KEYS.read}:read`, TOOL_FILES_ROOT: files, ...o.env },
  });
  const baseUrl = e2e.cluster.apiUrl;
  const admin = createClient({ baseUrl, apiKey: KEYS.admin });
  return {
    e2e,
    baseUrl,
    admin,
    async close() {
      admin.close();
      await e2e.close();
    },
  };
}

/** Opens the console and signs in with `key`; resolves once the runs list shows. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now (the context needs `bypassCSP`: axe is injected inline). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
}

/** Saves a screenshot as a test artifact (`services/console/artifacts/<name>.png`). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Chromium with one page at the console tests' viewport (`bypassCSP`: axe is injected inline). */
export async function openConsolePage(): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  return { browser, context, page: await context.newPage() };
}

/**
 * A test file's after-hooks: a failing test prints the cluster's last 40 log lines (why the
 * page did not get there), and after the file the browser and the cluster close. `get` reads
 * them as they are when a hook runs (they are started in the file's beforeAll).
 */
export function closeAfterFile(get: () => { c: ConsoleCluster | undefined; browser: Browser | undefined }): void {
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${get().c?.e2e.lines.slice(-40).join('\n')}\n`);
  });
  afterAll(async () => {
    const { c, browser } = get();
    await browser?.close();
    await c?.close();
  });
}

/** A test file's cluster, browser and page, filled in by the file's beforeAll. */
export interface ConsoleSession {
  c: ConsoleCluster;
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

export interface ConsoleSessionOptions {
  /** the cluster's options, or a function run first in beforeAll that makes them (say, after starting a fake server they name) */
  cluster?: ConsoleClusterOptions | (() => Promise<ConsoleClusterOptions>);
  /** the key the page signs in with once set up (default the admin key); `false` leaves the page signed out */
  signInAs?: string | false;
  /** runs once the cluster and the page are up, before signing in */
  setup?: (s: ConsoleSession) => Promise<void>;
}

/**
 * The setup every console browser test file shares: in its beforeAll a cluster, Chromium with one
 * page, the file's own `setup`, then the page signed in; after the file, both closed (a failing
 * test prints the cluster's last log lines). The returned object's fields are set once beforeAll
 * has run, so tests read them as `s.c`, `s.page`.
 */
export function consoleSession(o: ConsoleSessionOptions = {}): ConsoleSession {
  const s = {} as ConsoleSession;
  beforeAll(async () => {
    s.c = await startConsoleCluster(typeof o.cluster === 'function' ? await o.cluster() : o.cluster);
    Object.assign(s, await openConsolePage());
    await o.setup?.(s);
    if (o.signInAs !== false) await signIn(s.page, s.c.baseUrl, o.signInAs ?? KEYS.admin);
  }, 240_000);
  closeAfterFile(() => ({ c: s.c, browser: s.browser }));
  return s;
}

/** Lets the page read and write the clipboard on the cluster's origin (copy buttons). */
export async function grantClipboard(s: ConsoleSession): Promise<void> {
  await s.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.c.baseUrl });
}

/** A Chat graph that asks back once (a ChatInput) and ends with the answer. */
export const chatGraph = {
  kind: 'Chat',
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'ask', kind: 'ChatInput', config: { prompt: 'and then?' } },
    { key: 'end', kind: 'End', config: { outcome: 'answered', resultPath: 'input.output.text' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'ask' },
    { key: 'e2', from: 'ask', to: 'end' },
  ],
};

/** Start → a Tool `echo` (labelled "Echo it") → a Pause asking "Ship it?" → End: a run that parks on a person after some work. */
export const pauseGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'echo', kind: 'Tool', label: 'Echo it', config: { toolName: 'echo', arguments: { said: 'hi' } } },
    { key: 'review', kind: 'Pause', config: { prompt: 'Ship it?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'end', kind: 'End', config: { outcome: 'shipped' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'echo' },
    { key: 'e2', from: 'echo', to: 'review' },
    { key: 'e3', from: 'review', to: 'end' },
  ],
};

/** Start → one Tool `key` with `config` (and `maxAttempts` when given) → End. */
export function oneToolGraph(key: string, config: Record<string, unknown>, maxAttempts?: number) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key, kind: 'Tool', ...(maxAttempts ? { maxAttempts } : {}), config },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: key },
      { key: 'e2', from: key, to: 'end' },
    ],
  };
}
