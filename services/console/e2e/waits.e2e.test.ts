/**
 * Waits in the run view, in real headless Chromium against a real cluster: a run parked on a
 * composite Wait (a signal, a token, a timer, an event) shows each arm, the time left ticking, the
 * token's callback URL (copied to the clipboard as the API gave it); the signal form's
 * refusals (422 for a payload the channel's schema refuses, 404 SignalUnknown for a channel
 * the graph does not declare) are shown, a good signal completes the run down its signal edge;
 * a second run's token is revoked after a confirmation and the run completes down the other
 * edge; a read-only key sees every act disabled with the scope it lacks. axe-core: no serious
 * or critical violation. Screenshots: artifacts/waits-*.png.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { KEYS, consoleSession, grantClipboard, screenshot, seriousViolations, signIn } from './console-cluster';

const graph = {
  signals: { review: { schema: { type: 'object', required: ['approved'] } } },
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'hold', kind: 'Wait', label: 'Hold for review', config: { any: [{ signal: 'review' }, { token: { timeout: 'PT2H' } }, { timer: 'PT1H' }, { event: 'review.skipped' }] } },
    { key: 'reviewed', kind: 'End', config: { outcome: 'reviewed', resultPath: 'input.output.payload' } },
    { key: 'other', kind: 'End', config: { outcome: 'other' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'hold' },
    { key: 'e2', from: 'hold', to: 'reviewed', condition: { path: 'output.kind', op: 'Eq', value: 'signal' } },
    { key: 'e3', from: 'hold', to: 'other', default: true },
  ],
};

describe('waits in the run view', () => {
  let defId: string;

  const s = consoleSession({
    setup: async (session) => {
      defId = (await session.c.admin.definitions.create({ name: 'review-wait', graph })).id;
      await grantClipboard(session);
    },
  });

  async function parkedRun(): Promise<string> {
    const { runId } = await s.c.admin.runs.start(defId, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.node(runId, 'hold')).waitpoints?.length ?? 0, { timeout: 30_000 }).toBe(1);
    return runId;
  }

  async function openWait(p: Page, runId: string) {
    await p.goto(`${s.c.baseUrl}/console/run?runId=${runId}&nodeKey=hold`);
    const panel = p.getByRole('region', { name: 'Wait' });
    await panel.locator('li[data-arm-kind="token"] .callback-url').waitFor({ timeout: 30_000 });
    return panel;
  }

  it('shows the arms, the time left ticking and the token’s callback URL; refusals of the signal form are shown; a good signal completes the run', async () => {
    const runId = await parkedRun();
    const panel = await openWait(s.page, runId);
    expect(await panel.locator('li').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-arm-kind')))).toEqual(['signal', 'token', 'timer', 'event']);
    expect(await panel.locator('li[data-arm-kind="signal"]').innerText()).toContain('review');
    expect(await panel.locator('li[data-arm-kind="event"]').innerText()).toContain('An event named review.skipped');
    // the time left moves with nothing happening: it is the Wait's wake time, an hour out
    const left = panel.locator('.time-left').last();
    const before = await left.innerText();
    expect(before).toMatch(/in (59 min|1 h)/);
    expect(await panel.locator('li[data-arm-kind="token"]').innerText()).toMatch(/expires at .* \(in (1 h 59 min|2 h 0 min)\)/);
    await expect.poll(() => left.innerText(), { timeout: 5_000 }).not.toBe(before);
    // the callback URL shown is the API's, and Copy puts it on the clipboard
    const url = (await s.c.admin.runs.node(runId, 'hold')).waitpoints![0]!.callbackUrl;
    expect(await panel.locator('.callback-url code').innerText()).toBe(url);
    await panel.getByRole('button', { name: 'Copy URL' }).click();
    await panel.getByText('Callback URL copied').waitFor();
    expect(await s.page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    // the Waiting on tab names the same wait in words
    await s.page.getByRole('tab', { name: 'Waiting on' }).click();
    expect(await s.page.locator('tr[data-blocker-node="hold"]').innerText()).toContain('A Wait on any of: signal review, token, timer, event review.skipped');
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'waits-parked');

    const form = panel.getByRole('form', { name: 'Send a signal' });
    expect(await form.getByLabel('Channel').inputValue()).toBe('review');
    // a payload the channel's schema refuses: 422, shown; the run still waits
    await form.getByLabel('Payload (JSON)').fill('{}');
    await form.getByRole('button', { name: 'Send signal' }).click();
    const refusal = form.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.innerText()).toMatch(/The signal was refused/);
    expect(await refusal.innerText()).toMatch(/approved/);
    expect(await seriousViolations(s.page)).toEqual([]);
    await refusal.scrollIntoViewIfNeeded();
    await screenshot(s.page, 'waits-signal-refused');
    // a channel the graph does not declare: 404 SignalUnknown
    await form.getByLabel('Channel').fill('nope');
    await form.getByRole('button', { name: 'Send signal' }).click();
    await form.getByRole('alert').filter({ hasText: 'SignalUnknown' }).waitFor();
    expect((await s.c.admin.runs.get(runId)).run.status).toBe('WaitingForApproval');

    // the declared channel and a payload that fits, sent from the keyboard
    await form.getByLabel('Channel').fill('review');
    await form.getByLabel('Payload (JSON)').fill('{"approved": true}');
    await form.getByRole('button', { name: 'Send signal' }).focus();
    await s.page.keyboard.press('Enter');
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('Completed');
    const done = await s.c.admin.runs.get(runId);
    expect(done.output).toMatchObject({ outcome: 'reviewed', result: { approved: true } });
    await s.page.locator('.graph-node[data-node-key="reviewed"][data-status="Succeeded"]').waitFor({ timeout: 15_000 });
  }, 120_000);

  it('revokes a token after a confirmation: the Wait fires with the token revoked and the run completes down the other edge', async () => {
    const runId = await parkedRun();
    const panel = await openWait(s.page, runId);
    const wp = (await s.c.admin.runs.node(runId, 'hold')).waitpoints![0]!;
    // the run head offers the same signal form for a signal sent before its Wait is reached
    await s.page.getByRole('button', { name: 'Send signal…' }).click();
    const signalDialog = s.page.getByRole('dialog', { name: 'Send a signal to this run' });
    expect(await signalDialog.getByLabel('Channel').inputValue()).toBe('review');
    expect(await seriousViolations(s.page)).toEqual([]);
    await s.page.keyboard.press('Escape');
    await signalDialog.waitFor({ state: 'detached' });
    await panel.getByRole('button', { name: 'Revoke token' }).click();
    const dialog = s.page.getByRole('dialog', { name: 'Revoke this token?' });
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'waits-revoke-confirm');
    // Escape keeps it
    await s.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await s.c.admin.waitpoints.get(wp.id)).status).toBe('waiting');
    await panel.getByRole('button', { name: 'Revoke token' }).click();
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await s.c.admin.waitpoints.get(wp.id)).status).toBe('revoked');
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('Completed');
    expect((await s.c.admin.runs.get(runId)).output).toMatchObject({ outcome: 'other' });
  }, 120_000);

  it('shows a read-only key what the Wait waits for, with every act disabled and why', async () => {
    const runId = await parkedRun();
    const ctx = await s.browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    try {
      const reader = await ctx.newPage();
      await signIn(reader, s.c.baseUrl, KEYS.read);
      const panel = await openWait(reader, runId);
      expect(await panel.getByRole('button', { name: 'Revoke token' }).isDisabled()).toBe(true);
      await panel.getByText('This key cannot revoke (it lacks the operate scope).').waitFor();
      const form = panel.getByRole('form', { name: 'Send a signal' });
      expect(await form.getByRole('button', { name: 'Send signal' }).isDisabled()).toBe(true);
      expect(await form.getByLabel('Channel').isDisabled()).toBe(true);
      await form.getByText('This key cannot send signals (it lacks the run scope).').waitFor();
      expect(await seriousViolations(reader)).toEqual([]);
      await screenshot(reader, 'waits-read-only');
    } finally {
      await ctx.close();
    }
    await s.c.admin.runs.cancel(runId);
  }, 120_000);
});
