/**
 * Every console page in real headless Chromium against a real cluster, in the light and the
 * dark theme: axe-core finds no serious or critical violation on any of them (the runs list,
 * a run's view with its Events and Timeline tabs, definitions, the editor, approvals, events,
 * schedules, webhooks, agents, MCP servers, audit, workers, chat and the sign-in page). The
 * theme follows the system's `prefers-color-scheme` until the header's toggle chooses, and
 * the choice is remembered across a reload. The runs list searches by text and by a run's
 * id (the server answers: a run older than the loaded page is found) and narrows to the days created; its header stays in view while scrolling. At 1024 px
 * and on a phone the run view and the runs list stay readable. Screenshots:
 * artifacts/theme-*.png, artifacts/runs-search.png, artifacts/runs-search-server.png, artifacts/narrow-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { consoleSession, pauseGraph as graph, screenshot, seriousViolations } from './console-cluster';

/** The elements that reach past the window's right edge (outside a box that scrolls them), as `tag.class` — none when the page has no sideways scroll. */
async function wider(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    if (document.documentElement.scrollWidth <= window.innerWidth) return [];
    return [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 8)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`);
  });
}

describe('every page, light and dark; run search; narrow screens', () => {
  const s = consoleSession();
  let runId = '';
  let definitionId = '';

  it('searches the runs by text and by id, narrows to days created, and keeps the header in view', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'shipping', graph });
    const other = await s.c.admin.definitions.create({ name: 'billing', graph });
    definitionId = def.id;
    ({ runId } = await s.c.admin.runs.start(def.id, { input: {} }));
    const started = await Promise.all(Array.from({ length: 24 }, () => s.c.admin.runs.start(other.id, { input: {} })));
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');

    await page.goto(`${s.c.baseUrl}/console/runs`);
    const rows = page.locator('tbody tr[data-run-id]');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(25);
    await page.getByLabel('Search').fill('shipping');
    await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run-id')))).toEqual([runId]);
    expect(new URL(page.url()).searchParams.get('q')).toBe('shipping');
    // a run's id prefix finds it too
    await page.getByLabel('Search').fill(started[3]!.runId.slice(0, 8));
    await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run-id')))).toEqual([started[3]!.runId]);
    // a full id that is not listed is offered to open
    const absent = '00000000-0000-4000-8000-000000000000';
    await page.getByLabel('Search').fill(absent);
    await page.getByRole('link', { name: /Open run 00000000/ }).waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows.count()).toBe(25);
    // days created: tomorrow onwards matches none, today matches all
    const day = (plus: number) => {
      const d = new Date();
      d.setDate(d.getDate() + plus);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    };
    await page.getByLabel('Created from').fill(day(1));
    await page.getByText('No run matches these filters').waitFor({ timeout: 10_000 });
    await page.getByLabel('Created from').fill(day(0));
    await page.getByLabel('to', { exact: true }).fill(day(0));
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(25);
    expect(new URL(page.url()).searchParams.get('from')).toBe(day(0));
    // the header stays at the top of the view once the list is scrolled
    await page.evaluate(() => document.getElementById('content')!.scrollTo(0, 600));
    const head = await page.locator('table thead th').first().boundingBox();
    const content = await page.locator('#content').boundingBox();
    expect(Math.abs(head!.y - content!.y)).toBeLessThan(2);
    await screenshot(page, 'runs-search');
    expect(await seriousViolations(page)).toEqual([]);
  }, 120_000);

  it('follows the system theme, toggles and remembers it, and every page has no serious or critical violation in either', async () => {
    const page = s.page;
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${s.c.baseUrl}/console/runs`);
    await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    const toggle = page.getByRole('button', { name: 'Dark theme' });
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await page.reload();
    await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(13, 17, 26)');

    const pages: Array<{ name: string; path: string; ready: (p: typeof page) => Promise<unknown> }> = [
      { name: 'runs', path: '/runs', ready: (p) => p.locator('tbody tr[data-run-id]').first().waitFor() },
      { name: 'run', path: `/run?runId=${runId}&nodeKey=review`, ready: (p) => p.locator('[data-node-panel="review"]').waitFor() },
      { name: 'run-events', path: `/run?runId=${runId}&tab=events`, ready: (p) => p.getByRole('tabpanel').locator('time').first().waitFor() },
      { name: 'run-timeline', path: `/run?runId=${runId}&tab=timeline`, ready: (p) => p.getByRole('list', { name: 'Timeline' }).waitFor() },
      { name: 'definitions', path: '/definitions', ready: (p) => p.getByText('shipping').first().waitFor() },
      { name: 'editor', path: `/editor?definitionId=${definitionId}`, ready: (p) => p.locator('.react-flow__node').first().waitFor() },
      { name: 'approvals', path: '/approvals', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'events', path: '/events', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'schedules', path: '/schedules', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'webhooks', path: '/webhooks', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'agents', path: '/agents', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'mcp', path: '/mcp-servers', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'audit', path: '/audit', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'workers', path: '/workers', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'chat', path: '/chat', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
    ];
    const found: Record<string, unknown[]> = {};
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => window.localStorage.setItem('flowline.theme', t), theme);
      for (const p of pages) {
        await page.goto(`${s.c.baseUrl}/console${p.path}`);
        await p.ready(page);
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
        const v = await seriousViolations(page);
        if (v.length > 0) found[`${theme} ${p.name}`] = v;
        if (theme === 'dark' && ['runs', 'run', 'editor', 'run-timeline'].includes(p.name)) await screenshot(page, `theme-dark-${p.name}`);
      }
    }
    // the sign-in page, signed out, in both
    const signedOut = await s.browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const out = await signedOut.newPage();
    for (const theme of ['light', 'dark'] as const) {
      await out.emulateMedia({ colorScheme: theme });
      await out.goto(`${s.c.baseUrl}/console/`);
      await out.getByLabel('API key').waitFor();
      const v = await seriousViolations(out);
      if (v.length > 0) found[`${theme} sign-in`] = v;
      if (theme === 'dark') await screenshot(out, 'theme-dark-sign-in');
    }
    await signedOut.close();
    expect(found).toEqual({});
  }, 240_000);

  it('reads at 1024 px and on a phone', async () => {
    const page = s.page;
    await page.evaluate(() => window.localStorage.setItem('flowline.theme', 'light'));
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=review`);
    await page.locator('[data-node-panel="review"]').waitFor();
    await screenshot(page, 'narrow-1024-run');
    // nothing wider than the window: no sideways scroll of the page
    expect(await wider(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${s.c.baseUrl}/console/runs`);
    await page.locator('tbody tr[data-run-id]').first().waitFor();
    await screenshot(page, 'narrow-phone-runs');
    expect(await wider(page)).toEqual([]);
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.locator('.run-title').waitFor();
    await screenshot(page, 'narrow-phone-run');
    expect(await wider(page)).toEqual([]);
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);

  it('asks the server: a search finds a run older than the loaded page, by id prefix and by text', async () => {
    const page = s.page;
    const needleDef = await s.c.admin.definitions.create({ name: 'needle-in-haystack', graph });
    const hay = await s.c.admin.definitions.create({ name: 'hay', graph });
    const needle = await s.c.admin.runs.start(needleDef.id, { input: {}, metadata: { ticket: 'INC-90210' } });
    // more runs than the list's first page (50), all newer than the needle
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 20 }, () => s.c.admin.runs.start(hay.id, { input: {} })));
    await page.goto(`${s.c.baseUrl}/console/runs`);
    const rows = page.locator('tbody tr[data-run-id]');
    const listed = () => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run-id')));
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(50);
    expect(await listed()).not.toContain(needle.runId);
    await page.getByRole('button', { name: 'Load older runs' }).waitFor();

    // its id prefix: the server finds it although no loaded page holds it
    await page.getByLabel('Search').fill(needle.runId.slice(0, 6));
    await expect.poll(listed, { timeout: 10_000 }).toContain(needle.runId);
    expect((await listed()).every((id) => id!.startsWith(needle.runId.slice(0, 6)))).toBe(true);
    // text in its definition's name, and in a metadata value, any case
    // (the text is sent once typing pauses: the URL says which search the list answers)
    const asked = () => new URL(page.url()).searchParams.get('q');
    await page.getByLabel('Search').fill('NEEDLE-IN');
    await expect.poll(asked).toBe('NEEDLE-IN');
    await expect.poll(listed, { timeout: 10_000 }).toEqual([needle.runId]);
    await page.getByLabel('Search').fill('hay');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(50);
    await page.getByLabel('Search').fill('inc-90210');
    await expect.poll(asked).toBe('inc-90210');
    await expect.poll(listed, { timeout: 10_000 }).toEqual([needle.runId]);
    await screenshot(page, 'runs-search-server');
    // a whole id no run has: nothing listed, and the link to open it stays
    await page.getByLabel('Search').fill('00000000-0000-4000-8000-00000000beef');
    await page.getByRole('link', { name: /Open run 00000000/ }).waitFor();
    expect(await rows.count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  }, 120_000);
});
