/**
 * The console in real headless Chromium (Debian's, driven by playwright-core) against a
 * real cluster: sign in, start the canonical graph from the console, watch its nodes
 * change live, approve its Pause in the decision panel, cancel a second run, a read-only
 * key sees no action, a Chat graph answers on the chat page; axe-core finds no serious or
 * critical violation on the runs list, the run view and the chat page; every selection
 * (filters, run, node, edge, tab, definition, conversation) survives a reload. Screenshots
 * of the run view and the chat page are saved under services/console/artifacts/.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { JsonObject } from '@flowline/graph';
import { canonicalWithTool } from '@flowline/testing';
import { NODE_HANDLE_OFFSETS } from '../src/graph/canvas';
import { KEYS, chatGraph, closeAfterFile, openConsolePage, screenshot, seriousViolations, signIn, startConsoleCluster, type ConsoleCluster } from './console-cluster';

/**
 * The canonical eight-node graph as the e2e suite runs it (its Agent an echo Tool), with
 * a Start `defaultInput` (so "Start run" is one click) and a `warmup` Tool that waits
 * 1.5 s after Start, so a node is visibly in flight before it succeeds.
 */
function canonicalForConsole(): JsonObject {
  const doc = canonicalWithTool();
  const nodes = doc.nodes as JsonObject[];
  const edges = doc.edges as JsonObject[];
  nodes[0]!.config = { defaultInput: { requiresReview: true } };
  nodes.splice(1, 0, { key: 'warmup', kind: 'Tool', label: 'Warm up', config: { toolName: 'wait', arguments: { ms: 1500 } } });
  const e1 = edges.find((e) => e.key === 'e1')!;
  e1.to = 'warmup';
  edges.splice(1, 0, { key: 'e0', from: 'warmup', to: 'analyze' });
  return doc;
}

/** Start → ask (ChatInput) → End: the End publishes the answer to the conversation. */
/** Status changes of every graph node, recorded in the page as they are drawn. */
const RECORD_STATUSES = () => {
  const seen: Record<string, string[]> = {};
  const note = (el: Element) => {
    const key = el.getAttribute('data-node-key');
    const status = el.getAttribute('data-status');
    if (!key || !status) return;
    const list = (seen[key] ??= []);
    if (list.at(-1) !== status) list.push(status);
  };
  const scan = () => document.querySelectorAll('.graph-node[data-node-key]').forEach(note);
  new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  scan();
  (window as unknown as { __statuses: typeof seen }).__statuses = seen;
  (window as unknown as { __noReload: boolean }).__noReload = true;
};

describe('the console in Chromium against a real cluster', () => {
  let c: ConsoleCluster;
  let browser: Browser;
  let page: Page;
  let canonicalId: string;
  let chatId: string;
  let firstRun: string;
  let secondRun: string;

  beforeAll(async () => {
    c = await startConsoleCluster();
    canonicalId = (await c.admin.definitions.create({ name: 'canonical', description: 'The canonical eight-node graph', graph: canonicalForConsole() })).id;
    chatId = (await c.admin.definitions.create({ name: 'Ask and answer', description: 'A Chat graph that asks back', graph: chatGraph })).id;
    ({ browser, page } = await openConsolePage());
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));

  it('signs in with a pasted key and shows the key’s tenant and scopes', async () => {
    await signIn(page, c.baseUrl, KEYS.admin);
    await expect.poll(() => page.locator('.tenant-chip').innerText()).toContain('acme');
    expect(await page.locator('.scope-chip').allInnerTexts()).toEqual(['read', 'run', 'operate', 'define', 'keys', 'audit']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('starts the canonical graph from the console and shows its nodes changing live, without a reload', async () => {
    await page.getByRole('link', { name: 'Definitions' }).click();
    await page.getByRole('link', { name: 'Start run of canonical' }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByLabel('Run input (JSON)').inputValue()).toContain('"requiresReview": true');
    await dialog.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/console\/run\?runId=/);
    firstRun = new URL(page.url()).searchParams.get('runId')!;
    await page.locator('.graph-node[data-node-key="warmup"]').waitFor();
    await page.evaluate(RECORD_STATUSES);
    // the Pause is reached live: warmup was seen in flight and then succeeded, review turned waiting
    await page.locator('.graph-node[data-node-key="review"][data-status="WaitingForApproval"]').waitFor({ timeout: 30_000 });
    const seen = await page.evaluate(() => (window as unknown as { __statuses: Record<string, string[]> }).__statuses);
    expect(seen.warmup!.some((s) => s === 'Queued' || s === 'Running')).toBe(true);
    expect(seen.warmup!.at(-1)).toBe('Succeeded');
    expect(seen.warmup!.indexOf('Succeeded')).toBeGreaterThan(seen.warmup!.findIndex((s) => s === 'Queued' || s === 'Running'));
    expect(seen.analyze!.at(-1)).toBe('Succeeded');
    expect(seen.review!.at(-1)).toBe('WaitingForApproval');
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(await page.locator('[data-live-mode]').getAttribute('data-live-mode')).toBe('live');
    // the handles the view gives React Flow up front are where the drawn ones are
    const drawn = await page.evaluate(() => {
      const node = document.querySelector('.react-flow__node')!;
      const box = node.getBoundingClientRect();
      const zoom = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')!).transform).a;
      const at = (sel: string) => {
        const r = node.querySelector(sel)!.getBoundingClientRect();
        return { x: Math.round((r.left - box.left) / zoom), y: Math.round((r.top - box.top) / zoom) };
      };
      return { target: at('.react-flow__handle.target'), source: at('.react-flow__handle.source') };
    });
    expect(drawn).toEqual(NODE_HANDLE_OFFSETS);
  });

  it('approves the Pause in the decision panel and the run completes, live', async () => {
    await page.locator('.graph-node[data-node-key="review"]').click();
    const panel = page.locator('[data-node-panel="review"]');
    await expect.poll(() => panel.getByText('Approve the analysis?').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'run-view-waiting');
    // the waiting run's clock ticks between events: its duration moves with nothing happening
    const meta = page.locator('.run-meta');
    const before = await meta.innerText();
    await expect.poll(() => meta.innerText(), { timeout: 5_000 }).not.toBe(before);
    // why isn't it moving: the Waiting on tab names the gate
    await page.getByRole('tab', { name: 'Waiting on' }).click();
    await page.locator('tr[data-blocker-node="review"][data-blocker-kind="gate"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-blocker-node="review"]').innerText()).toContain('Waiting for a person: a decision.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('tab', { name: /Nodes/ }).click();
    await panel.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    for (const key of ['review', 'fanout', 'merge', 'done']) {
      expect(await page.locator(`.graph-node[data-node-key="${key}"]`).getAttribute('data-status')).toBe('Succeeded');
    }
    expect(await page.locator('.graph-node[data-node-key="lookup"]').getAttribute('data-status')).toBe('Skipped');
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    await page.getByRole('tab', { name: 'Output' }).click();
    await expect.poll(() => page.locator('.output-tab').innerText()).toContain('completed');
    await page.getByRole('tab', { name: /Nodes/ }).click();
    await page.evaluate(() => document.getElementById('content')?.scrollTo(0, 0));
    await screenshot(page, 'run-view');
    expect((await c.admin.runs.get(firstRun)).run.status).toBe('Completed');
  });

  it('forks the completed run from a node: the new run opens, reuses what succeeded upstream and completes', async () => {
    await page.goto(`${c.baseUrl}/console/run?runId=${firstRun}&nodeKey=merge`);
    const panel = page.locator('[data-node-panel="merge"]');
    await panel.getByRole('button', { name: 'Fork from here…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Fork run' }).click();
    await page.waitForURL((u) => u.searchParams.get('runId') !== firstRun, { timeout: 10_000 });
    const forked = new URL(page.url()).searchParams.get('runId')!;
    await page.locator('.run-title [data-status="Completed"]').waitFor({ timeout: 30_000 });
    const detail = await c.admin.runs.get(forked);
    expect(detail.run.forkedFrom).toEqual({ runId: firstRun, nodeKey: 'merge' });
    // the new run's view links back to where it was forked from
    expect(await page.locator(`[data-forked-from="${firstRun}"]`).innerText()).toContain('merge');
    expect(await page.locator(`tr[data-node-key="review"] [data-reused-from="${firstRun}"]`).count()).toBe(1);
    const byKey = new Map(detail.nodeRuns.map((n) => [n.nodeKey, n]));
    // the decision upstream was reused, not asked again; the forked node ran again
    expect(byKey.get('review')!.reusedFrom).toBe(firstRun);
    expect(byKey.get('merge')!.reusedFrom ?? null).toBeNull();
  });

  it('cancels a second run from the console and it reads Cancelled', async () => {
    const { runId } = await c.admin.runs.start(canonicalId, { input: { requiresReview: true } });
    secondRun = runId;
    await page.goto(`${c.baseUrl}/console/run?runId=${runId}`);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Reason/).fill('not needed');
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.run-title [data-status="Cancelled"]').waitFor({ timeout: 30_000 });
    expect((await c.admin.runs.get(runId)).run.status).toBe('Cancelled');
    // the nodes it never reached read "Not run", in the graph and the table, not "Pending"; its reason is in the header
    await page.locator('.graph-node[data-node-key="merge"][data-status="NotRun"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('.graph-node [data-status="Pending"]').count()).toBe(0);
    expect(await page.locator('.graph-node[data-node-key="merge"] .badge').innerText()).toBe('Not run');
    expect(await page.locator('tr[data-node-key="merge"] .badge').innerText()).toBe('Not run');
    expect(await page.locator('.run-meta .run-reason').innerText()).toContain('not needed');
  });

  it('cancels every run a metadata filter matches with one bulk action: the count first, then the job to its end', async () => {
    const batch = `e2e-${Date.now()}`;
    const runs = await Promise.all([1, 2, 3].map(() => c.admin.runs.start(canonicalId, { input: { requiresReview: true }, metadata: { batch } })));
    // one more of another batch: the filter must leave it alone
    const other = await c.admin.runs.start(canonicalId, { input: { requiresReview: true }, metadata: { batch: `${batch}-other` } });
    await page.goto(`${c.baseUrl}/console/runs?metadata=${encodeURIComponent(`batch:${batch}`)}`);
    for (const { runId } of runs) await page.locator(`tr[data-run-id="${runId}"]`).waitFor({ timeout: 30_000 });
    expect(await page.locator(`tr[data-run-id="${other.runId}"]`).count()).toBe(0);
    await page.getByRole('button', { name: 'Act on matching runs…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('3 runs would be affected.').waitFor({ timeout: 30_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel 3 runs' }).click();
    await dialog.locator('[data-bulk-status="Completed"]').waitFor({ timeout: 60_000 });
    await dialog.getByText('3 of 3 handled').waitFor();
    await screenshot(page, 'bulk-cancel');
    await dialog.getByRole('button', { name: 'Done' }).click();
    for (const { runId } of runs) {
      await expect.poll(async () => (await c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('Cancelled');
      await page.locator(`tr[data-run-id="${runId}"][data-status="Cancelled"]`).waitFor({ timeout: 30_000 });
    }
    expect((await c.admin.runs.get(other.runId)).run.status).not.toBe('Cancelled');
    await c.admin.runs.cancel(other.runId);
  });

  it('shows the runs list newest first with both runs, updated live, with no accessibility violation', async () => {
    await page.getByRole('link', { name: 'Runs' }).first().click();
    await page.locator(`tr[data-run-id="${secondRun}"][data-status="Cancelled"]`).waitFor();
    const ids = await page.locator('tr[data-run-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(ids.indexOf(secondRun)).toBeLessThan(ids.indexOf(firstRun));
    // a run started elsewhere appears, and its status changes in its row, without a reload
    const { runId } = await c.admin.runs.start(canonicalId, { input: { requiresReview: true } });
    await page.locator(`tr[data-run-id="${runId}"][data-status="WaitingForApproval"]`).waitFor({ timeout: 30_000 });
    await c.admin.runs.cancel(runId);
    await page.locator(`tr[data-run-id="${runId}"][data-status="Cancelled"]`).waitFor({ timeout: 30_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'runs-list');
  });

  it('shows a read-only key no action: no start, decide, cancel or operator button', async () => {
    const readOnly = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const p = await readOnly.newPage();
    try {
      await signIn(p, c.baseUrl, KEYS.read);
      expect(await p.locator('.scope-chip').allInnerTexts()).toEqual(['read']);
      await p.goto(`${c.baseUrl}/console/definitions`);
      await p.locator(`tr[data-definition-id="${canonicalId}"]`).waitFor();
      expect(await p.getByRole('link', { name: /Start run/ }).count()).toBe(0);
      const { runId } = await c.admin.runs.start(canonicalId, { input: { requiresReview: true } });
      await p.goto(`${c.baseUrl}/console/run?runId=${runId}&nodeKey=review`);
      await p.locator('.graph-node[data-node-key="review"][data-status="WaitingForApproval"]').waitFor({ timeout: 30_000 });
      await p.locator('[data-node-panel="review"]').getByText('lacks the run scope').waitFor();
      for (const name of ['Approve', 'Reject', 'Cancel run', 'Pause', 'Resume', 'Breakpoint', 'Skip', 'Retry', 'Complete…', 'Steer…', 'Edit input…']) {
        expect({ name, count: await p.getByRole('button', { name, exact: true }).count() }).toEqual({ name, count: 0 });
      }
      await p.locator('.react-flow__edge').first().click({ force: true });
      expect(await p.getByRole('button', { name: /Force/ }).count()).toBe(0);
      await c.admin.runs.cancel(runId);
    } finally {
      await readOnly.close();
    }
  });

  it('answers in the chat page: a message starts the Chat graph, the run asks back, the answer is published', async () => {
    await page.goto(`${c.baseUrl}/console/chat?definitionId=${chatId}`);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/conversationId=/);
    await page.getByLabel('Message', { exact: true }).fill('hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('The run asks:').waitFor({ timeout: 30_000 });
    await page.getByLabel('Message', { exact: true }).fill('the answer is 42');
    await page.getByRole('button', { name: 'Answer' }).click();
    await page.locator('.bubble-assistant', { hasText: 'the answer is 42' }).waitFor({ timeout: 30_000 });
    await page.locator('.run-card[data-status="Completed"]').waitFor({ timeout: 30_000 });
    const roles = await page.locator('.thread .bubble[data-role]').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
    expect(roles).toEqual(['user', 'assistant']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat');
  });

  it('keeps every selection in the URL: a reload shows the same filters, run, node, edge, tab and conversation', async () => {
    /** reloads the page, checking that it really was a new document */
    const reload = async () => {
      await page.evaluate(() => ((window as unknown as { __beforeReload: boolean }).__beforeReload = true));
      await page.reload();
      expect(await page.evaluate(() => (window as unknown as { __beforeReload?: boolean }).__beforeReload)).toBeUndefined();
    };
    // the runs list's filters
    await page.goto(`${c.baseUrl}/console/runs`);
    await page.getByLabel('Status', { exact: true }).selectOption('Cancelled');
    await page.waitForURL(/status=Cancelled/);
    await page.getByLabel('Definition', { exact: true }).selectOption(canonicalId);
    await page.waitForURL(/definitionId=/);
    await reload();
    await page.locator(`tr[data-run-id="${secondRun}"]`).waitFor();
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('Cancelled');
    await expect.poll(() => page.getByLabel('Definition', { exact: true }).inputValue()).toBe(canonicalId);
    expect(await page.locator(`tr[data-run-id="${firstRun}"]`).count()).toBe(0);

    // the run view's run, node and tab
    await page.goto(`${c.baseUrl}/console/run?runId=${firstRun}`);
    await page.locator('.graph-node[data-node-key="review"]').click();
    await page.locator('[data-node-panel="review"]').waitFor();
    await page.getByRole('tab', { name: 'Events' }).click();
    await page.waitForURL(/tab=events/);
    expect(new URL(page.url()).searchParams.get('nodeKey')).toBe('review');
    await reload();
    await page.locator('[data-node-panel="review"]').waitFor();
    expect(await page.getByRole('tab', { name: 'Events' }).getAttribute('aria-selected')).toBe('true');
    // each event at its wall-clock time to the millisecond, not the milliseconds alone (once the
    // reloaded tab has read its events: the tab is selected before they arrive)
    await page.locator('time.event-at').nth(3).waitFor();
    const times = await page.locator('time.event-at').allTextContents();
    expect(times.length).toBeGreaterThan(3);
    for (const t of times) expect(t).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
    expect(await page.locator('.event-gap').nth(1).textContent()).toMatch(/^\+\d/);
    await screenshot(page, 'events-tab');
    expect(await page.locator('.graph-node[data-node-key="review"]').getAttribute('class')).toContain('is-selected');

    // an edge
    await page.locator('.react-flow__edge').first().click({ force: true });
    await page.waitForURL(/edgeKey=/);
    const edgeKey = new URL(page.url()).searchParams.get('edgeKey')!;
    await reload();
    await page.locator(`[data-edge-panel="${edgeKey}"]`).waitFor();

    // the chat page's definition and conversation
    await page.goto(`${c.baseUrl}/console/chat?definitionId=${chatId}`);
    await page.locator('.conversation').first().click();
    await page.waitForURL(/conversationId=/);
    const conversationId = new URL(page.url()).searchParams.get('conversationId')!;
    await reload();
    await page.locator('.conversation[aria-current="page"]', { hasText: conversationId }).waitFor();
    await page.locator('.bubble-assistant', { hasText: 'the answer is 42' }).waitFor();
  }, 90_000);

  // after the reload test: it adds the newest conversation, which the chat page lists first
  it('asks before starting a workflow again after its last run in the conversation was cancelled, and resends when confirmed', async () => {
    const conversationId = `rerun-${Date.now()}`;
    const first = await c.admin.conversations.send(conversationId, { definitionId: chatId, text: 'first try', requestId: `${conversationId}-1` });
    await c.admin.runs.cancel(first.runId);
    await expect.poll(async () => (await c.admin.runs.get(first.runId)).run.status, { timeout: 30_000 }).toBe('Cancelled');
    await page.goto(`${c.baseUrl}/console/chat?definitionId=${chatId}&conversationId=${conversationId}`);
    await page.getByLabel('Message', { exact: true }).fill('second try');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('[role="alert"][data-code="RerunConfirmationRequired"]');
    await ask.waitFor({ timeout: 10_000 });
    expect(await ask.innerText()).toContain('ended Cancelled. Start the workflow again with this message?');
    await screenshot(page, 'chat-rerun');
    expect(await seriousViolations(page)).toEqual([]);
    await ask.getByRole('button', { name: 'Start again' }).click();
    await page.getByText('The run asks:').waitFor({ timeout: 30_000 });
    const runs = await c.admin.conversations.runs(conversationId);
    expect(runs.items.map((r) => r.status)).toEqual([expect.not.stringMatching(/Cancelled/), 'Cancelled']);
    expect(runs.items[0]).toMatchObject({ definitionName: 'Ask and answer', pendingInput: { nodeKey: 'ask' } });
  });

  it("shows the running Agent's live output in the chat and steers it from there; the steer lands in the thread", async () => {
    // no LLM worker runs in this cluster: the Agent stays Queued, live and steerable
    const agentChat = {
      kind: 'Chat',
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'helper', kind: 'Agent', config: { instructions: 'Help the person.' } },
        { key: 'end', kind: 'End', config: { outcome: 'answered' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'helper' },
        { key: 'e2', from: 'helper', to: 'end' },
      ],
    };
    const defId = (await c.admin.definitions.create({ name: 'Agent chat', graph: agentChat })).id;
    await page.goto(`${c.baseUrl}/console/chat?definitionId=${defId}`);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/conversationId=/);
    await page.getByLabel('Message', { exact: true }).fill('plan my week');
    await page.getByRole('button', { name: 'Send' }).click();
    const live = page.locator('.chat-live[data-node-key="helper"]');
    await live.waitFor({ timeout: 30_000 });
    await live.getByText('is queued: waiting for a model worker').waitFor();
    await live.getByLabel('Steer helper while it works').fill('mornings only');
    await live.getByRole('button', { name: 'Steer' }).click();
    await page.locator('.thread .bubble[data-role="user"]', { hasText: 'mornings only' }).waitFor({ timeout: 15_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat-steer');
  });

  it('attaches a file to a chat message: uploaded at once, shown as a chip, sent, and listed on the message', async () => {
    const filesChat = {
      kind: 'Chat',
      chat: { acceptsAttachments: true },
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'ask', kind: 'ChatInput', config: { prompt: 'anything else?' } },
        { key: 'end', kind: 'End', config: { outcome: 'answered' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'ask' },
        { key: 'e2', from: 'ask', to: 'end' },
      ],
    };
    const defId = (await c.admin.definitions.create({ name: 'Files chat', graph: filesChat })).id;
    await page.goto(`${c.baseUrl}/console/chat?definitionId=${defId}`);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/conversationId=/);
    await page.getByLabel('Attach files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('buy milk\nwater plants\n') });
    const chips = page.getByRole('list', { name: 'Attachments to send' });
    await chips.getByText('notes.txt').waitFor({ timeout: 15_000 });
    await chips.getByText('text · 22 B').waitFor();
    await page.getByLabel('Message', { exact: true }).fill('what is on my list?');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat-attachments-composer');
    await page.getByRole('button', { name: 'Send' }).click();
    const bubble = page.locator('.thread .bubble[data-role="user"]', { hasText: 'what is on my list?' });
    await bubble.getByRole('list', { name: 'Attached files' }).getByText('notes.txt').waitFor({ timeout: 30_000 });
    await page.getByText('The run asks:').waitFor({ timeout: 30_000 });
    expect(await chips.count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'chat-attachments');
  });

  it('shows the lanes and their workers: the tool worker serving, LLM jobs waiting with no worker flagged', async () => {
    // no LLM worker runs in this cluster: an Agent's job waits on its lane
    const agentGraph = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'think', kind: 'Agent', config: { instructions: 'Think.' } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'think' },
        { key: 'e2', from: 'think', to: 'end' },
      ],
    };
    const { runId } = await c.admin.runs.start((await c.admin.definitions.create({ name: 'waits for an LLM worker', graph: agentGraph })).id, {});
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Workers' }).click();
    await page.getByRole('heading', { name: 'Workers', level: 1 }).waitFor();
    const tool = page.locator('section[data-lane="tool"]');
    await tool.locator('tr[data-worker-id]').first().waitFor({ timeout: 15_000 });
    expect(await tool.locator('tr[data-worker-id]').count()).toBe(1);
    expect(await tool.locator('tr[data-worker-id] td').first().innerText()).toMatch(/pid \d+/);
    const llm = page.locator('section[data-lane="llm"]');
    await expect.poll(() => llm.locator('[data-lane-depth]').innerText(), { timeout: 15_000 }).not.toBe('0');
    await llm.getByRole('alert').getByText('no worker serves this lane').waitFor({ timeout: 10_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'workers');
    await c.admin.runs.cancel(runId);
  });
});
