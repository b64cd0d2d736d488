/**
 * The Events page in real headless Chromium against a real cluster: events sent with the API are
 * listed newest first with their verdict counts and filtered by name; an event's details show
 * its data and each subscriber's verdict — a filter error with its reason, a match with a link
 * to the run it started; "Send event" refuses text that is not JSON before sending, shows the
 * API's refusal of a bad name, and sends a good event whose details then open; a replay the API
 * refuses (the event is gone) shows the refusal. Reached from the navigation by keyboard;
 * axe-core finds no serious or critical violation. Screenshots: artifacts/events*.png.
 */
import { describe, expect, it } from 'vitest';
import { consoleSession, screenshot, seriousViolations } from './console-cluster';

const triggered = (triggers: unknown[]) => ({
  triggers,
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'end', kind: 'End', config: { outcome: 'done' } },
  ],
  edges: [{ key: 'e1', from: 'start', to: 'end' }],
});

describe('the Events page', () => {
  const s = consoleSession();

  it('lists and filters events, shows verdicts with their runs and filter errors, sends an event, and shows a refused replay', async () => {
    await s.c.admin.definitions.create({ name: 'big-orders', graph: triggered([{ event: 'order.paid', filter: { path: 'data.total', op: 'Gt', value: 100 } }]) });
    await s.c.admin.events.send([{ name: 'order.paid', id: 'ev-text', data: { total: 'lots' } }]);
    await s.c.admin.events.send([{ name: 'meter.read', id: 'ev-meter', data: { kwh: 3 } }]);

    await s.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Events' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    const rows = s.page.locator('tr[data-event-id]');
    await expect.poll(() => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-event-id'))), { timeout: 15_000 }).toEqual(['ev-meter', 'ev-text']);
    expect(await s.page.locator('tr[data-event-id="ev-text"]').innerText()).toContain('filter error');
    expect(await s.page.locator('tr[data-event-id="ev-meter"]').innerText()).toContain('no subscriber');

    // the name filter, typed and submitted with the keyboard
    await s.page.getByLabel('Name', { exact: true }).fill('order.paid');
    await s.page.keyboard.press('Enter');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
    expect(s.page.url()).toContain('name=order.paid');
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'events');

    // a filter error, with why
    await s.page.getByRole('button', { name: 'Details of event ev-text' }).click();
    const detail = s.page.getByRole('dialog', { name: 'Event order.paid' });
    const errored = detail.locator('tr[data-outcome="filterError"]');
    await errored.waitFor();
    expect(await errored.innerText()).toContain('big-orders');
    expect(await errored.innerText()).toContain('data.total is a string');
    expect(await detail.innerText()).toContain('"lots"');
    await s.page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });

    // send: text that is not JSON is refused inline; a bad name is refused by the API, shown as it said
    await s.page.getByRole('button', { name: 'Send event' }).click();
    const send = s.page.getByRole('dialog', { name: 'Send an event' });
    await send.getByLabel('Name').fill('order paid!');
    await send.getByLabel('Data (JSON)').fill('{"total": 150');
    await send.getByText(/^Not JSON:/).waitFor();
    expect(await send.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await send.getByLabel('Data (JSON)').fill('{"total": 150}');
    await send.getByRole('button', { name: 'Send' }).click();
    await send.getByRole('alert').getByText('ValidationFailed').waitFor();
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'events-send-refused');
    await send.getByLabel('Name').fill('order.paid');
    await send.getByRole('button', { name: 'Send' }).click();

    // the sent event's details open: matched, with a link to the run it started
    const matched = s.page.getByRole('dialog', { name: 'Event order.paid' }).locator('tr[data-outcome="matched"]');
    await matched.waitFor({ timeout: 15_000 });
    const link = matched.getByRole('link', { name: /^Run [0-9a-f]{8} started for big-orders$/ });
    const runHref = await link.getAttribute('href');
    expect(runHref).toMatch(/\/console\/run\?runId=[0-9a-f-]{36}/);
    const sentId = new URL(s.page.url()).searchParams.get('eventId')!;
    const sent = await s.c.admin.events.get(sentId);
    expect(runHref).toContain(sent.matches[0]!.runId!);
    expect(await seriousViolations(s.page)).toEqual([]);
    await screenshot(s.page, 'events-detail');

    // a replay of an event gone meanwhile (retention, say): the API's 404 is shown, not swallowed
    await s.c.e2e.db.pool.query('DELETE FROM inbound_events WHERE tenant_id = $1 AND id = $2', ['acme', sentId]);
    await s.page.getByRole('dialog', { name: 'Event order.paid' }).getByRole('button', { name: 'Replay' }).click();
    await s.page.getByRole('dialog', { name: 'Event order.paid' }).getByRole('alert').getByText('The replay was refused').waitFor();
    expect(await s.page.getByRole('dialog', { name: 'Event order.paid' }).getByRole('alert').first().innerText()).toContain('NotFound');
    await screenshot(s.page, 'events-replay-refused');

    // the run link leads to the run
    await link.click();
    await s.page.waitForURL(/\/console\/run\?runId=/);
  }, 90_000);
});
