// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderApp } from '../test/render';

const SCHED = 'aaaaaaaa-0000-4000-8000-000000000001';
const RUN = 'bbbbbbbb-0000-4000-8000-000000000001';
const iso = '2026-03-08T07:00:00.000Z';
const schedule = (paused: boolean) => ({
  id: SCHED, key: 'nightly', definitionId: 'dddddddd-0000-4000-8000-000000000001', version: 'current', input: {}, metadata: {},
  spec: { cron: '30 2 * * *', timezone: 'America/New_York' }, policy: { overlap: 'skip', catchup: { window: 'PT1H', mode: 'latest' }, pauseOnFailure: false },
  paused, pausedReason: paused ? 'paused by an operator' : null, nextSlot: paused ? null : { at: iso, local: '2026-03-08T03:00:00-04:00', utcOffset: '-04:00' },
  lastSlotAt: null, revision: 1, createdAt: iso, updatedAt: iso,
});

function api(scopes = ['read', 'run', 'operate', 'define']) {
  let paused = false;
  return fakeApi({
    'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes, authRequired: false } }),
    'GET /v1/schedules': () => ({ body: { items: [schedule(paused)], nextCursor: null } }),
    'POST /v1/schedules/*/pause': () => {
      paused = true;
      return { body: schedule(true) };
    },
    'POST /v1/schedules/*/resume': () => {
      paused = false;
      return { body: schedule(false) };
    },
    'POST /v1/schedules/*/trigger': () => refuse(409, 'ScheduleStartRefused', 'the definition is disabled'),
    'GET /v1/schedules/*/preview': () => ({ body: { timezone: 'America/New_York', slots: [{ at: iso, local: '2026-03-08T03:00:00-04:00', utcOffset: '-04:00' }] } }),
    'GET /v1/schedules/*/slots': () => ({
      body: {
        items: [
          { slotAt: '2026-03-07T07:30:00.000Z', source: 'cron', outcome: 'started', runId: RUN, reason: null, decidedAt: iso },
          { slotAt: '2026-03-06T07:30:00.000Z', source: 'cron', outcome: 'skippedOverlap', runId: null, reason: '1 run(s) of the schedule still live (overlap skip)', decidedAt: iso },
        ],
        nextCursor: null,
      },
    }),
  });
}

describe('the schedules page', () => {
  it('lists schedules with their spec, zone and next slot in local time, and shows the next slots and the ledger', async () => {
    renderApp('/console/schedules', api());
    const row = (await screen.findByText('nightly')).closest('tr')!;
    expect(within(row).getByText('cron 30 2 * * *')).toBeTruthy();
    expect(within(row).getByText('America/New_York')).toBeTruthy();
    expect(within(row).getByText('2026-03-08T03:00:00-04:00')).toBeTruthy();
    await userEvent.click(within(row).getByRole('button', { name: 'Slots of nightly' }));
    const dialog = await screen.findByRole('dialog', { name: 'Slots of nightly' });
    expect(await within(dialog).findByText('2026-03-08T03:00:00-04:00')).toBeTruthy();
    const ledger = await within(dialog).findByRole('table', { name: 'Slot ledger' });
    expect(within(ledger).getByText('skippedOverlap')).toBeTruthy();
    expect(within(ledger).getByText('1 run(s) of the schedule still live (overlap skip)')).toBeTruthy();
  });

  it('pauses and resumes with the operate scope, and shows a refused trigger with its code', async () => {
    const a = api();
    renderApp('/console/schedules', a);
    await userEvent.click(await screen.findByRole('button', { name: 'Pause nightly' }));
    expect(await screen.findByRole('button', { name: 'Resume nightly' })).toBeTruthy();
    expect(screen.getByText('Paused: paused by an operator')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Resume nightly' }));
    await screen.findByRole('button', { name: 'Pause nightly' });
    await userEvent.click(screen.getByRole('button', { name: 'Trigger nightly now' }));
    await waitFor(() => expect(screen.getByText(/the definition is disabled/)).toBeTruthy());
    expect(a.calls).toContain('POST /v1/schedules/' + SCHED + '/pause');
  });

  it('offers no pause or trigger to a read-only key', async () => {
    renderApp('/console/schedules', api(['read']));
    await screen.findByText('nightly');
    expect(screen.queryByRole('button', { name: 'Pause nightly' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Trigger nightly now' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Slots of nightly' })).toBeTruthy();
  });
});
