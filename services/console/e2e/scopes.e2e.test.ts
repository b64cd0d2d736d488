/**
 * A key's scopes in real headless Chromium against a real cluster (an admin key and a read-only
 * key of one tenant). The sign-in page asks no whoami before a key is typed (no 401 in the
 * console). The read-only key is not offered "Start a run", cannot open the start dialog through
 * `?start=`, sees the editor read-only with no validate request and no red error, and is not
 * offered "New conversation". A new conversation reads no route that would answer 404 before its
 * first message, and reads them once written to. axe-core finds no serious or critical
 * violation. Screenshots: artifacts/scopes-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { KEYS, chatGraph, consoleSession, screenshot, seriousViolations, signIn } from './console-cluster';

const lineGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'e1', from: 'start', to: 'end' }],
};

/** Every API answer the page got, as `<status> <method> <path>`. */
function answers(page: Page): string[] {
  const seen: string[] = [];
  page.on('response', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/v1/')) seen.push(`${r.status()} ${r.request().method()} ${url.pathname}`);
  });
  return seen;
}

describe('what a key may do, in the console', () => {
  const s = consoleSession({ signInAs: false });
  let context: BrowserContext | undefined;

  const freshPage = async () => {
    await context?.close();
    context = await s.browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    return context.newPage();
  };

  it('asks no whoami on the sign-in page before a key exists', async () => {
    const page = await freshPage();
    const seen = answers(page);
    await page.goto(`${s.c.baseUrl}/console/`);
    await page.getByLabel('API key').waitFor();
    await page.waitForTimeout(500);
    expect(seen).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await signIn(page, s.c.baseUrl, KEYS.read);
    expect(seen.filter((a) => a.startsWith('401 '))).toEqual([]);
    expect(seen).toContain('200 GET /v1/whoami');
  });

  it('shows a read-only key no start, a read-only editor without a validate error, and no new conversation', async () => {
    const def = await s.c.admin.definitions.create({ name: 'looked-at', graph: lineGraph });
    const chat = await s.c.admin.definitions.create({ name: 'talk', graph: chatGraph });
    const page = await freshPage();
    const seen = answers(page);
    await signIn(page, s.c.baseUrl, KEYS.read);

    // the runs list offers no start
    expect(await page.getByRole('link', { name: 'Start a run' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // ?start= opens no dialog; the page says why
    await page.goto(`${s.c.baseUrl}/console/definitions?start=${def.id}`);
    await page.getByRole('heading', { name: 'Definitions', level: 1 }).waitFor();
    await page.locator(`tr:has-text("looked-at")`).first().waitFor();
    await page.getByRole('note').getByText('This key cannot start runs: it lacks the run scope.').waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'scopes-definitions-start');

    // the editor opens read-only: nothing validated (the route needs define), no red error
    await page.goto(`${s.c.baseUrl}/console/editor?definitionId=${def.id}`);
    await page.locator('.react-flow__node[data-id="end"]').waitFor();
    await page.getByRole('note', { name: 'Read-only editor' }).waitFor();
    expect(await page.getByTestId('editor-status').innerText()).toBe('v1 · read-only');
    await page.waitForTimeout(800);
    expect(await page.locator('.validation-strip').getAttribute('data-state')).toBe('unavailable');
    expect(await page.locator('.validation-strip').getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Start', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add Condition' }).isDisabled()).toBe(true);
    expect(seen.filter((a) => a.includes('/validate'))).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'scopes-editor-read-only');

    // chat: the conversations are listed, but no new one is offered
    await page.goto(`${s.c.baseUrl}/console/chat?definitionId=${chat.id}`);
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    await page.getByRole('complementary', { name: 'Conversations' }).getByText('No conversation yet.').waitFor();
    expect(await page.getByRole('button', { name: 'New conversation' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    expect(seen.filter((a) => /^4\d\d /.test(a))).toEqual([]);
  });

  it('reads nothing of a new conversation before its first message, and reads it once written to', async () => {
    const chat = (await s.c.admin.definitions.list({ limit: 50 })).items.find((d) => d.name === 'talk')!;
    const page = await freshPage();
    const seen = answers(page);
    await signIn(page, s.c.baseUrl, KEYS.admin);
    await page.goto(`${s.c.baseUrl}/console/chat?definitionId=${chat.id}`);
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForURL(/conversationId=c-/);
    const conversationId = new URL(page.url()).searchParams.get('conversationId')!;
    await page.getByRole('region', { name: 'Conversation' }).getByText('Send the first message to start a run.').waitFor();
    await page.waitForTimeout(800);
    expect(seen.filter((a) => a.includes(`/v1/conversations/${conversationId}/`))).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'scopes-new-conversation');

    await page.getByLabel('Message', { exact: true }).fill('hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => seen.filter((a) => a.startsWith(`200 GET /v1/conversations/${conversationId}/`)).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    await page.getByRole('list', { name: 'Messages' }).getByText('hello').first().waitFor();
    expect(seen.filter((a) => /^4\d\d /.test(a))).toEqual([]);
    await context?.close();
  });
});
