/**
 * Single sign-on in real headless Chromium against a real cluster and a real OpenID Connect
 * provider (oidc-provider, started here): a person signs in through the provider's form, the
 * console names them and its live channel connects on their session cookie; they cancel a
 * run, and the Audit log page shows that they did; they sign out. A person whose groups map
 * only to `read` sees no action on a waiting run. A refused person reads why on the sign-in
 * page. axe-core finds no serious or critical violation. Screenshots:
 * services/console/artifacts/sso-*.png.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { TEST_OIDC_SCOPES, startOidcProvider, type TestOidcProvider } from '@flowline/testing';
import { closeAfterFile, openConsolePage, screenshot, seriousViolations, startConsoleCluster, type ConsoleCluster } from './console-cluster';

const PAUSE_GRAPH = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'gate', kind: 'Pause', config: { prompt: 'ship it?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'gate' },
    { key: 'e2', from: 'gate', to: 'end' },
  ],
};

describe('single sign-on in the console', () => {
  let c: ConsoleCluster;
  let provider: TestOidcProvider;
  let browser: Browser;
  let page: Page;
  let definitionId: string;

  beforeAll(async () => {
    let apiUrl = '';
    // the provider learns the console's callback once the cluster has its port (at its first request)
    provider = await startOidcProvider({
      redirectUris: () => [`${apiUrl}/auth/callback`],
      accounts: {
        ana: { email: 'ana@example.com', name: 'Ana Ops', groups: ['ops'], flowline_tenant: 'acme' },
        vic: { email: 'vic@example.com', name: 'Vic Viewer', groups: ['viewers'], flowline_tenant: 'acme' },
        nog: { email: 'nog@example.com', groups: ['contractors'], flowline_tenant: 'acme' },
      },
    });
    c = await startConsoleCluster({
      env: {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: provider.clientId,
        OIDC_CLIENT_SECRET: provider.clientSecret,
        OIDC_SCOPES: TEST_OIDC_SCOPES,
        OIDC_GROUP_SCOPES: 'ops:*,viewers:read',
      },
    });
    apiUrl = c.baseUrl;
    definitionId = (await c.admin.definitions.create({ name: 'sso-gate', graph: PAUSE_GRAPH })).id;
    ({ browser, page } = await openConsolePage());
  }, 240_000);

  closeAfterFile(() => ({ c, browser }));

  /** Signs in as `login` through the provider's form, from the console's sign-in page. */
  async function signInWithSso(p: Page, login: string, path = '/console/'): Promise<void> {
    await p.goto(`${c.baseUrl}${path}`);
    await p.getByRole('link', { name: 'Sign in with SSO' }).click();
    await p.locator('input[name="login"]').fill(login);
    await p.locator('input[name="password"]').fill('any password');
    await p.getByRole('button', { name: 'Sign-in' }).click();
    await p.waitForURL((u) => u.origin === c.baseUrl && u.pathname.startsWith('/console'));
  }

  it('signs a person in through the provider; they cancel a run and the audit log names them', async () => {
    await page.goto(`${c.baseUrl}/console/`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sso-sign-in');

    const { runId } = await c.admin.runs.start(definitionId, {});
    await signInWithSso(page, 'ana', `/console/run?runId=${runId}`);
    // back on the page they asked for, named, and live over the session cookie
    await page.locator('.graph-node[data-node-key="gate"][data-status="WaitingForApproval"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.topbar').innerText()).toContain('Ana Ops');
    await page.locator('.live-indicator.is-up').waitFor({ timeout: 10_000 });

    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Reason/).fill('wrong release');
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.run-title [data-status="Cancelled"]').waitFor({ timeout: 30_000 });
    expect((await c.admin.runs.get(runId)).run.status).toBe('Cancelled');

    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    const cancel = page.locator('tr[data-audit-action="run.cancel"]');
    await cancel.waitFor();
    expect(await cancel.textContent()).toContain('user:ana@example.com');
    expect(await cancel.textContent()).toContain(runId);
    await page.locator('tr[data-audit-action="session.signIn"]').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sso-audit');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    // the cookie is dead on the server: a reload does not sign back in
    await page.reload();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
  }, 120_000);

  it('shows a person whose groups map to read no action on a waiting run', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const p = await context.newPage();
    try {
      const { runId } = await c.admin.runs.start(definitionId, {});
      await signInWithSso(p, 'vic', `/console/run?runId=${runId}&nodeKey=gate`);
      await p.locator('.graph-node[data-node-key="gate"][data-status="WaitingForApproval"]').waitFor({ timeout: 30_000 });
      expect(await p.locator('.scope-chip').allInnerTexts()).toEqual(['read']);
      expect(await p.locator('.topbar').innerText()).toContain('Vic Viewer');
      for (const name of ['Approve', 'Reject', 'Cancel run', 'Pause', 'Resume', 'Skip', 'Retry']) {
        expect({ name, count: await p.getByRole('button', { name, exact: true }).count() }).toEqual({ name, count: 0 });
      }
      expect(await seriousViolations(p)).toEqual([]);
      await screenshot(p, 'sso-read-only');
      await c.admin.runs.cancel(runId);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('tells a person whose groups hold no scope why they were refused', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
    const p = await context.newPage();
    try {
      await signInWithSso(p, 'nog');
      const alert = p.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toMatch(/^SignInRefused: none of your groups \(contractors\) holds a Flowline scope/);
      await screenshot(p, 'sso-refused');
    } finally {
      await context.close();
    }
  }, 60_000);
});
