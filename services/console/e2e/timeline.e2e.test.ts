/**
 * The run view's Timeline tab in real headless Chromium against a real cluster: a run parked on
 * a Pause shows each node it reached as a row of the waterfall, in the order reached — queued
 * and running spans, the Pause's open wait on a person growing while it waits — and, once the
 * gate is approved with the API, the wait closed and every node ended. Clicking a node's name
 * selects it. axe-core finds no serious or critical violation. Screenshots:
 * artifacts/timeline-*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, pauseGraph, screenshot, seriousViolations } from './console-cluster';

describe('the run timeline', () => {
  const s = consoleSession();

  it('draws the waterfall of the nodes, the wait on a person open while it waits and closed once decided', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'timed', graph: pauseGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');

    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('tab', { name: 'Timeline' }).click();
    const rows = page.getByRole('list', { name: 'Timeline' }).locator('li');
    await expect.poll(() => rows.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-node-key')))).toEqual(['start', 'echo', 'review']);
    const echo = page.locator('li.timeline-row[data-node-key="echo"]');
    expect(await echo.getAttribute('data-end')).toBe('Succeeded');
    expect(await echo.locator('.timeline-span').evaluateAll((ss) => ss.map((x) => x.getAttribute('data-kind')))).toEqual(['queued', 'running']);
    expect(await echo.locator('.timeline-node').innerText()).toBe('Echo it');
    const review = page.locator('li.timeline-row[data-node-key="review"]');
    expect(await review.getAttribute('data-end')).toBe('open');
    const wait = review.locator('.timeline-span[data-kind="waiting"]');
    expect(await wait.getAttribute('aria-label')).toMatch(/^waiting on a person: .* so far$/);
    // the wait grows while it lasts: its bar ends at the right of the track, now
    const track = await review.locator('.timeline-track').boundingBox();
    const bar = await wait.boundingBox();
    expect(bar!.x + bar!.width).toBeGreaterThan(track!.x + track!.width - 3);
    // spans of a node follow one another left to right
    const boxes = await Promise.all((await echo.locator('.timeline-span').all()).map((x) => x.boundingBox()));
    expect(boxes[0]!.x).toBeLessThanOrEqual(boxes[1]!.x);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'timeline-waiting');

    await s.c.admin.runs.decide(runId, 'review', { operationId: crypto.randomUUID(), decision: 'Approve' });
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => rows.evaluateAll((ls) => ls.map((l) => `${l.getAttribute('data-node-key')}:${l.getAttribute('data-end')}`)), { timeout: 15_000 }).toEqual([
      'start:Succeeded',
      'echo:Succeeded',
      'review:Succeeded',
      'end:Succeeded',
    ]);
    expect(await wait.getAttribute('aria-label')).not.toContain('so far');
    await screenshot(page, 'timeline-completed');

    // a node's name selects it
    await review.getByRole('button', { name: 'review' }).click();
    await page.waitForURL(/[?&]nodeKey=review(&|$)/);
    expect(await seriousViolations(page)).toEqual([]);
  }, 90_000);

  it('shows the timeline and the events in a resizable pane beside the graph; the events narrow by node, kind and text, and their details open', async () => {
    const page = s.page;
    const def = await s.c.admin.definitions.create({ name: 'paned', graph: pauseGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');
    await page.goto(`${s.c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('button', { name: 'Timeline beside the graph' }).click();
    await page.waitForURL(/[?&]pane=timeline(&|$)/);
    const pane = page.getByRole('region', { name: 'Timeline beside the graph' });
    await pane.getByRole('list', { name: 'Timeline' }).locator('li[data-node-key="review"]').waitFor();
    // beside the graph, not under it
    const graphBox = (await page.locator('.graph-pane').boundingBox())!;
    const paneBox = (await pane.boundingBox())!;
    expect(paneBox.x).toBeGreaterThanOrEqual(graphBox.x + graphBox.width - 1);
    expect(Math.abs(paneBox.y - graphBox.y)).toBeLessThan(2);
    // the split drags: the graph's bottom-right corner widens the graph and narrows the pane
    await page.mouse.move(graphBox.x + graphBox.width - 3, graphBox.y + graphBox.height - 3);
    await page.mouse.down();
    await page.mouse.move(graphBox.x + graphBox.width - 150, graphBox.y + graphBox.height - 3, { steps: 5 });
    await page.mouse.up();
    expect((await page.locator('.graph-pane').boundingBox())!.width).toBeLessThan(graphBox.width - 100);
    expect((await pane.boundingBox())!.width).toBeGreaterThan(paneBox.width + 100);

    const rows = pane.getByRole('list', { name: 'Events' }).locator('li');
    const all = await rows.count();
    await pane.getByLabel('Node').selectOption('echo');
    expect(await rows.evaluateAll((ls) => [...new Set(ls.map((l) => l.getAttribute('data-node-key')))])).toEqual(['echo']);
    await pane.getByLabel('Kind').selectOption('node.completed');
    expect(await rows.evaluateAll((ls) => ls.map((l) => `${l.getAttribute('data-node-key')} ${l.getAttribute('data-kind')}`))).toEqual(['echo node.completed']);
    await pane.getByLabel('Node').selectOption('');
    await pane.getByLabel('Kind').selectOption('');
    await expect.poll(() => rows.count()).toBe(all);
    // a text in a detail: the Pause's prompt is nowhere but the review's events
    await pane.getByLabel('Search events').fill('review');
    expect(await rows.evaluateAll((ls) => [...new Set(ls.map((l) => l.getAttribute('data-node-key')))])).toEqual(['review']);
    await pane.getByLabel('Search events').fill('');
    // a payload opens to its whole JSON
    const payload = rows.locator('details.event-payload').first();
    await payload.locator(':scope > summary').click();
    await payload.locator('.json-doc').waitFor();
    expect(await payload.getAttribute('open')).not.toBeNull();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'timeline-pane');
  }, 90_000);
});
