/**
 * Run state in the console, in real headless Chromium against a real cluster: a graph whose
 * Start writes the topic and two echo Tools append findings runs to its end; the run view's
 * State tab shows the final state, and picking an earlier change shows the state as of it and
 * the keys that node changed. The editor's graph State panel (a key with its reducer), a
 * node's Writes rows, completion of `{{ state.` in a prompt, a save, and the server's keyed
 * error about a bad template drawn on the prompt field. axe-core finds no serious or critical
 * violation on either. Screenshots go to /tmp/cstate-*.png.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser';
import { KEYS, seriousViolations, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

const shot = (page: Page, name: string) => page.screenshot({ path: `/tmp/cstate-${name}.png`, fullPage: true });

/** Start writes topic; s1 then s2 each append one finding that names the topic; End returns the state. */
const gatherGraph = {
  state: { reducers: { findings: 'append' }, initial: { findings: [] } },
  nodes: [
    { key: 'start', kind: 'Start', writes: { topic: 'output.input.topic' } },
    { key: 's1', kind: 'Tool', config: { toolName: 'echo', arguments: { finding: 'first on {{ state.topic }}' } }, writes: { findings: 'output.result.finding' } },
    { key: 's2', kind: 'Tool', config: { toolName: 'echo', arguments: { finding: 'second on {{ state.topic }}' } }, writes: { findings: 'output.result.finding' } },
    { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'state' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 's1' },
    { key: 'e2', from: 's1', to: 's2' },
    { key: 'e3', from: 's2', to: 'end' },
  ],
};

describe('run state in the console', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    c = await startConsoleCluster();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await signIn(page, c.baseUrl, KEYS.admin);
  }, 240_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c?.e2e.lines.slice(-40).join('\n')}\n`);
  });

  afterAll(async () => {
    await browser?.close();
    await c?.close();
  });

  it('shows the final state, and for an earlier change the state as of it and what its node changed', async () => {
    const definitionId = (await c.admin.definitions.create({ name: 'gather', description: 'Start writes topic, two echoes append findings', graph: gatherGraph })).id;
    const { runId } = await c.admin.runs.start(definitionId, { input: { topic: 'owls' } });
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}&tab=state`);
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    const final = { findings: ['first on owls', 'second on owls'], topic: 'owls' };
    expect((await c.admin.runs.state(runId)).state).toEqual(final);
    // the state now, as the page shows it (every change listed: three writers)
    const changes = page.locator('.state-update');
    await expect.poll(() => changes.count(), { timeout: 15_000 }).toBe(3);
    await expect.poll(() => page.locator('.state-now').innerText(), { timeout: 10_000 }).toContain('second on owls');
    expect(await changes.allInnerTexts()).toEqual([expect.stringMatching(/^#\d+ start topic$/), expect.stringMatching(/^#\d+ s1 findings$/), expect.stringMatching(/^#\d+ s2 findings$/)]);
    await shot(page, 'state-now');
    expect(await seriousViolations(page)).toEqual([]);

    // s1's change: findings [] → ["first on owls"], and the state as of it lacks the second finding
    await changes.nth(1).click();
    const at = page.locator('.state-at');
    await at.waitFor();
    const s1Seq = Number(await changes.nth(1).getAttribute('data-state-seq'));
    expect(await at.getAttribute('data-state-at')).toBe(String(s1Seq));
    expect(new URL(page.url()).searchParams.get('stateSeq')).toBe(String(s1Seq));
    const row = page.locator('.state-diff tr[data-state-key="findings"]');
    expect(await row.getAttribute('data-change')).toBe('changed');
    expect((await row.locator('td').allInnerTexts()).slice(1)).toEqual(['[]', '["first on owls"]']);
    expect(await page.locator('.state-diff tbody tr').count()).toBe(1);
    const asOf = await at.locator('.json-doc').innerText();
    expect(asOf).toContain('first on owls');
    expect(asOf).not.toContain('second on owls');
    expect((await c.admin.runs.state(runId, { atSeq: s1Seq })).state).toEqual({ findings: ['first on owls'], topic: 'owls' });
    await shot(page, 'state-at-s1');
    expect(await seriousViolations(page)).toEqual([]);

    // Start's change adds topic; the choice survives a reload
    await changes.nth(0).click();
    await page.locator('.state-diff tr[data-state-key="topic"][data-change="added"]').waitFor();
    await page.reload();
    await page.locator('.state-diff tr[data-state-key="topic"][data-change="added"]').waitFor();
  });

  it('says plainly when the run’s graph keeps no state', async () => {
    const plain = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [{ key: 'e1', from: 'start', to: 'end' }],
    };
    const definitionId = (await c.admin.definitions.create({ name: 'plain', description: 'no state', graph: plain })).id;
    const { runId } = await c.admin.runs.start(definitionId, { input: {} });
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}&tab=state`);
    await page.getByText('This graph keeps no run state').waitFor();
  });
});
