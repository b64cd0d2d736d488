/**
 * The Webhooks page in real headless Chromium against a real cluster: a bearer hook created in
 * the console shows its generated secret once (never again in the page), its public URL with a
 * copy button; deliveries made to that URL are listed with their verdicts — verified with the
 * run it started, refused with why — and a replay answers a duplicate of the same run, while the
 * replay of a refused delivery shows the API's refusal; a GitHub hook created with a typed secret
 * never shows it back; rotation adds a second secret and ends the old one at the chosen time;
 * delete removes the hook. Reached from the navigation by keyboard; axe-core finds no serious or
 * critical violation. Screenshots: artifacts/webhooks*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, grantClipboard, screenshot, seriousViolations } from './console-cluster';

const lineGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'e1', from: 'start', to: 'end' }],
};

/** A delivery with the sender's headers only (no API key: the hook's URL takes none). */
async function deliver(url: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

describe('the Webhooks page', () => {
  const s = consoleSession({ setup: grantClipboard });

  it('creates a hook, shows its secret once, lists deliveries with verdicts, replays, rotates and deletes', async () => {
    const def = await s.c.admin.definitions.create({ name: 'ingest', graph: lineGraph });

    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await s.page.getByText('No webhooks yet').waitFor();

    // create: a bearer hook, its secret generated and shown once
    await s.page.getByRole('button', { name: 'Create webhook' }).click();
    const create = s.page.getByRole('dialog', { name: 'Create a webhook' });
    await create.getByLabel('Slug (optional)').fill('orders');
    await create.getByLabel('Definition', { exact: true }).selectOption({ label: 'ingest' });
    await create.getByLabel('Verification').selectOption('bearer');
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'webhooks-create');
    await create.getByRole('button', { name: 'Create' }).click();
    const once = s.page.getByRole('dialog', { name: 'Secret of orders' });
    await once.getByText('shown this once').waitFor();
    const secret = (await once.locator('.secret-once code').innerText()).trim();
    expect(secret.length).toBeGreaterThanOrEqual(16);
    await screenshot(s.page, 'webhooks-secret-once');
    await once.getByRole('button', { name: 'Done' }).click();
    await once.waitFor({ state: 'detached' });

    const hook = (await s.c.admin.webhooks.list()).items.find((h) => h.slug === 'orders')!;
    expect(hook).toMatchObject({ target: { definitionId: def.id }, auth: { type: 'bearer', secrets: [{ id: 'primary', notAfter: null }] } });
    const row = s.page.locator('tr[data-hook-slug="orders"]');
    await row.waitFor();
    expect(await row.innerText()).toContain(hook.url);
    expect(await s.page.locator('body').innerText()).not.toContain(secret);
    await row.getByRole('button', { name: 'Copy URL of orders' }).click();
    await expect.poll(() => s.page.evaluate(() => navigator.clipboard.readText()), { timeout: 5_000 }).toBe(hook.url);

    // deliveries: one with the wrong token (refused, why), one verified (its run)
    expect(await deliver(hook.url, { n: 1 }, { authorization: 'Bearer not-the-secret-at-all' })).toBe(401);
    expect(await deliver(hook.url, { n: 2 }, { authorization: `Bearer ${secret}` })).toBe(202);
    await row.getByRole('button', { name: 'Deliveries orders' }).click();
    const deliveries = s.page.getByRole('dialog', { name: 'Deliveries to orders' });
    const verified = deliveries.locator('tr[data-verdict="verified"]');
    await verified.waitFor({ timeout: 15_000 });
    const runLink = verified.getByRole('link', { name: /^run [0-9a-f]{8}$/ });
    await runLink.waitFor();
    const refused = deliveries.locator('tr[data-verdict="badSignature"]');
    expect(await refused.innerText()).toMatch(/bad signature/);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'webhooks-deliveries');

    // a replay of the verified one answers the same run (a duplicate); of the refused one, the API's refusal
    await verified.getByRole('button', { name: /^Replay/ }).click();
    const duplicate = deliveries.locator('tr[data-verdict="duplicate"]');
    await duplicate.waitFor({ timeout: 15_000 });
    expect(await duplicate.getByRole('link', { name: /^run / }).innerText()).toBe(await runLink.innerText());
    await refused.getByRole('button', { name: /^Replay/ }).click();
    await refused.getByRole('alert').getByText('WebhookDeliveryNotReplayable').waitFor();
    await screenshot(s.page, 'webhooks-replay-refused');
    await s.page.keyboard.press('Escape');
    await deliveries.waitFor({ state: 'detached' });

    // a GitHub hook with a typed secret: no secret shown back, anywhere
    const typed = 'typed-github-secret-0123456789';
    await s.page.getByRole('button', { name: 'Create webhook' }).click();
    await create.getByLabel('Slug (optional)').fill('gh');
    await create.getByRole('radio', { name: 'an event' }).check();
    await create.getByLabel('Event name').fill('github.push');
    await create.getByLabel('Verification').selectOption('github');
    await create.getByLabel('Secret (optional)').fill(typed);
    await create.getByRole('button', { name: 'Create' }).click();
    await create.waitFor({ state: 'detached' });
    await s.page.locator('tr[data-hook-slug="gh"]').waitFor();
    expect(await s.page.locator('tr[data-hook-slug="gh"]').innerText()).toContain('GitHub (HMAC)');
    expect(await s.page.content()).not.toContain(typed);

    // rotation: a second secret (generated, shown once), the old one ending at the chosen time
    await row.getByRole('button', { name: 'Rotate secret orders' }).click();
    const rotate = s.page.getByRole('dialog', { name: 'Rotate the secret of orders' });
    await rotate.getByLabel('New secret id').fill('second');
    await rotate.getByLabel('Old secrets verify until').fill('2030-01-02T03:04');
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    const second = (await s.page.getByRole('dialog', { name: 'Secret of orders' }).locator('.secret-once code').innerText()).trim();
    expect(second).not.toBe(secret);
    await s.page.getByRole('dialog', { name: 'Secret of orders' }).getByRole('button', { name: 'Done' }).click();
    const rotated = await s.c.admin.webhooks.get(hook.id);
    expect(rotated.auth.secrets).toEqual([
      { id: 'primary', notAfter: new Date(2030, 0, 2, 3, 4).toISOString() },
      { id: 'second', notAfter: null },
    ]);
    await expect.poll(() => row.innerText(), { timeout: 10_000 }).toContain('second');
    expect(await deliver(hook.url, { n: 3 }, { authorization: `Bearer ${second}` })).toBe(202);
    expect(await deliver(hook.url, { n: 4 }, { authorization: `Bearer ${secret}` })).toBe(202);

    // delete
    await row.getByRole('button', { name: 'Delete orders' }).click();
    await s.page.getByRole('dialog', { name: 'Delete orders?' }).getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await s.c.admin.webhooks.list()).items.map((h) => h.slug)).toEqual(['gh']);
  }, 90_000);
});
