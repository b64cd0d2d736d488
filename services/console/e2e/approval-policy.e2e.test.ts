/**
 * A Pause's approval policy in real headless Chromium against a real cluster: the gate forbids
 * the run's initiator (`approval.forbid: ["initiator"]`) and takes one key with the run scope.
 * The run is started with key K. Signed in with K, the approvals inbox shows the gate with its
 * quorum and says K may not decide it ("Waiting for me" is empty); K's approval in the run view
 * is refused with the API's 403 and the rule's name, shown to the user, and the gate stays open.
 * Signed in with another key, the gate waits for that key, its approval goes through the
 * console path and the run completes; the inbox then lists nothing. axe-core finds no serious
 * or critical violation. Screenshots: artifacts/approval-policy-*.png.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '@flowline/client';
import { KEYS, consoleSession, screenshot, seriousViolations, signIn } from './console-cluster';

const OTHER = 'k-console-other';

const gatedGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    {
      key: 'review',
      kind: 'Pause',
      config: { prompt: 'Ship it?', allowedDecisions: ['Approve', 'Reject'], approval: { quorums: [{ name: 'ops', scope: 'run', min: 1 }], forbid: ['initiator'] } },
    },
    { key: 'end', kind: 'End', config: { outcome: 'shipped' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'review' },
    { key: 'e2', from: 'review', to: 'end' },
  ],
};

describe('an approval policy in the console', () => {
  const s = consoleSession({ cluster: { env: { API_KEYS: `acme:${KEYS.admin},acme:${KEYS.read}:read,acme:${OTHER}` } } });

  const openInbox = async () => {
    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Approvals' }).click();
    await s.page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
  };

  it("refuses the run's initiator with the rule's name and keeps the gate open; another key approves", async () => {
    const other = createClient({ baseUrl: s.c.baseUrl, apiKey: OTHER });
    const [me, them] = [await s.c.admin.whoami(), await other.whoami()];
    const def = await s.c.admin.definitions.create({ name: 'gated', graph: gatedGraph });
    const { runId } = await s.c.admin.runs.start(def.id, { input: {} });
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('WaitingForApproval');

    // signed in with the initiator's key: listed, with the quorum, but not waiting for me
    await openInbox();
    const row = s.page.locator(`tr[data-approval-run="${runId}"]`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getAttribute('data-waiting-for-me')).toBe('false');
    expect(await row.innerText()).toContain('ops: 0 of 1');
    expect(await row.innerText()).toContain('keys with scope run');
    expect(await row.locator('[data-viewer-rule]').getAttribute('data-viewer-rule')).toBe('initiator');
    await s.page.getByRole('button', { name: /^Waiting for me/ }).click();
    await s.page.getByText('Nothing waits for you').waitFor();
    expect(await s.page.getByRole('button', { name: /^Waiting for me/ }).getAttribute('aria-pressed')).toBe('true');
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'approval-policy-inbox-initiator');

    // the initiator tries anyway, in the run view: the 403 and the rule's name are shown, the gate stays open
    await s.page.getByRole('button', { name: /^All/ }).click();
    await row.getByText('You cannot decide (initiator)').waitFor();
    await screenshot(s.page, 'approval-policy-inbox-all');
    await row.getByRole('link', { name: /^Decide review/ }).click();
    const panel = s.page.getByRole('region', { name: 'Decision' });
    await panel.getByRole('button', { name: 'Approve' }).click();
    const alert = panel.getByRole('alert');
    await alert.getByText('ApprovalForbidden').waitFor({ timeout: 15_000 });
    expect(await alert.innerText()).toContain('forbid: initiator');
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'approval-policy-refused');
    const still = await s.c.admin.runs.node(runId, 'review');
    expect(still.status).toBe('WaitingForApproval');
    expect((await s.c.admin.runs.get(runId)).run.status).toBe('WaitingForApproval');

    // another key: the gate waits for it, its approval goes through the console path
    await s.page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(s.page, s.c.baseUrl, OTHER);
    await openInbox();
    await s.page.getByRole('button', { name: 'Waiting for me (1)' }).click();
    await row.waitFor();
    expect(await row.getAttribute('data-waiting-for-me')).toBe('true');
    expect(await row.innerText()).toContain(`You (${them.principal}) may decide, counting toward ops.`);
    await screenshot(s.page, 'approval-policy-inbox-other');
    await row.getByRole('link', { name: /^Decide review/ }).click();
    await s.page.getByRole('region', { name: 'Decision' }).getByRole('button', { name: 'Approve' }).click();
    await expect.poll(async () => (await s.c.admin.runs.get(runId)).run.status, { timeout: 30_000 }).toBe('Completed');
    const decided = await s.c.admin.runs.node(runId, 'review');
    expect(decided.approval?.decisions).toEqual([
      { principal: them.principal, decision: 'Approve', path: 'console', comment: null, at: expect.any(String) },
    ]);
    expect(me.principal).not.toBe(them.principal);
    other.close();
  }, 120_000);
});
