// @vitest-environment happy-dom
/**
 * Bulk actions from the runs list: the list's filters become the action's filter, the
 * dialog shows the dry run's count before anything is sent, submits once under one
 * request id, follows the job to its end, and shows every refusal.
 */
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { parseRunsSearch } from '../app/search';
import { BulkDialog } from './BulkDialog';
import { bulkFilterOf, bulkJobSettled, bulkProgressText, migrateMembers, migrateProgressText } from './bulk';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BULK = '77777777-2222-4333-8444-555555555555';

describe('the runs filter as a bulk filter', () => {
  it('carries each member, metadata pairs as an object, and is null when nothing filters', () => {
    expect(bulkFilterOf({})).toBeNull();
    const search = parseRunsSearch({ status: 'Failed', failureClass: 'Timeout', metadata: ['batch:n-42', 'team:a:b', 'bad', ''], definitionId: 'd1' });
    expect(search.metadata).toEqual(['batch:n-42', 'team:a:b']);
    expect(bulkFilterOf(search)).toEqual({ status: 'Failed', failureClass: 'Timeout', definitionId: 'd1', metadata: { batch: 'n-42', team: 'a:b' } });
    expect(parseRunsSearch({ metadata: 'k:v' }).metadata).toEqual(['k:v']);
    // the search text the server answers for the list is the action's too
    expect(bulkFilterOf(parseRunsSearch({ q: ' acme ' }))).toEqual({ q: 'acme' });
  });

  it('reads progress as handled of total, refusals apart', () => {
    expect(bulkProgressText({ total: 1000, done: 400, failed: 12 })).toBe('412 of 1,000 handled · 12 refused');
    expect(bulkProgressText({ total: 3, done: 3, failed: 0 })).toBe('3 of 3 handled');
    expect(bulkJobSettled({ status: 'Running' })).toBe(false);
    expect(bulkJobSettled({ status: 'Completed' })).toBe(true);
  });
});

describe('BulkDialog', () => {
  it('counts first, submits once under one key, and follows the job until it completes', async () => {
    let polls = 0;
    const api = fakeApi({
      'POST /v1/runs/bulk': ({ body }) => {
        const b = body as { dryRun?: boolean; action: string };
        if (b.dryRun) return { body: { count: b.action === 'cancel' ? 3 : 0 } };
        return { status: 202, body: { bulkId: BULK, count: 3 } };
      },
      [`GET /v1/bulk-jobs/${BULK}`]: () => {
        polls++;
        const done = Math.min(3, polls);
        return {
          body: { bulkId: BULK, action: 'cancel', status: done === 3 ? 'Completed' : 'Running', total: 3, done, failed: 0, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:01Z' },
        };
      },
    });
    renderInSession(<BulkDialog filter={{ metadata: { batch: 'x' } }} onClose={() => undefined} />, api);
    const d = screen.getByRole('dialog');
    await within(d).findByText('3 runs would be affected.');
    // an action no run matches cannot be submitted
    await userEvent.click(within(d).getByLabelText(/Retry failed/));
    await within(d).findByText('0 runs would be affected.');
    expect((within(d).getByRole('button', { name: /^Retry/ }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.click(within(d).getByLabelText(/^Cancel/));
    await within(d).findByText('3 runs would be affected.');
    await userEvent.click(within(d).getByRole('button', { name: 'Cancel 3 runs' }));
    await waitFor(() => expect(screen.getByTestId('bulk-progress').getAttribute('data-bulk-status')).toBe('Completed'), { timeout: 5_000 });
    expect(screen.getByText(/3 of 3 handled/)).toBeTruthy();
    const submits = api.sent.filter((s) => s.route === 'POST /v1/runs/bulk' && !(s.body as { dryRun?: boolean }).dryRun);
    expect(submits).toHaveLength(1);
    const sent = submits[0]!;
    expect(sent.body).toEqual({ action: 'cancel', filter: { metadata: { batch: 'x' } }, requestId: expect.stringMatching(UUID) });
    expect(sent.headers.get('idempotency-key')).toBe((sent.body as { requestId: string }).requestId);
    // every dry run was a dry run: nothing else was submitted
    expect(api.sent.filter((s) => s.route === 'POST /v1/runs/bulk').every((s) => s === sent || (s.body as { dryRun?: boolean }).dryRun === true)).toBe(true);
  }, 15_000);

  it('shows a refused count and a refused submission as code: message', async () => {
    let mode: 'count' | 'submit' = 'count';
    const api = fakeApi({
      'POST /v1/runs/bulk': ({ body }) => {
        const b = body as { dryRun?: boolean };
        if (b.dryRun && mode === 'count') return refuse(400, 'BulkTooLarge', 'more than MAX_BULK_RUNS (100000) runs match');
        if (b.dryRun) return { body: { count: 2 } };
        return refuse(403, 'Forbidden', "this key lacks the 'operate' scope");
      },
    });
    const view = renderInSession(<BulkDialog filter={{ status: 'Running' }} onClose={() => undefined} />, api);
    expect((await screen.findByRole('alert')).textContent).toMatch(/BulkTooLarge\s*more than MAX_BULK_RUNS/);
    view.unmount();
    mode = 'submit';
    renderInSession(<BulkDialog filter={{ status: 'Running' }} onClose={() => undefined} />, api);
    const d = screen.getByRole('dialog');
    await within(d).findByText('2 runs would be affected.');
    await userEvent.click(within(d).getByRole('button', { name: 'Cancel 2 runs' }));
    expect((await within(d).findByRole('alert')).textContent).toMatch(/Forbidden\s*this key lacks the 'operate' scope/);
  });

  it('migrates with a target version, canary and max error rate; shows migrated / refused / remaining, the pause with Resume, and the refused runs', async () => {
    let status: 'Paused' | 'Running' = 'Paused';
    const job = () => ({
      bulkId: BULK, action: 'migrate', status, pauseReason: status === 'Paused' ? 'canary' : null,
      migrate: { toVersion: 2, nodeMap: {}, canaryPercent: 20, maxErrorRate: 0.05 }, total: 10, done: 1, failed: 1, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:01Z',
    });
    const api = fakeApi({
      'POST /v1/runs/bulk': ({ body }) => ((body as { dryRun?: boolean }).dryRun ? { body: { count: 10 } } : { status: 202, body: { bulkId: BULK, count: 10 } }),
      [`GET /v1/bulk-jobs/${BULK}`]: () => ({ body: job() }),
      [`POST /v1/bulk-jobs/${BULK}/resume`]: () => {
        status = 'Running';
        return { body: job() };
      },
      [`GET /v1/bulk-jobs/${BULK}/runs`]: () => ({
        body: { items: [{ runId: 'aaaaaaaa-1111-4222-8333-444444444444', outcome: 'refused', reason: 'needsMapping', details: [{ code: 'needsMapping', nodeKey: 'q', message: "node 'q' is gone: map it" }] }], nextCursor: null },
      }),
    });
    renderInSession(<BulkDialog filter={{ definitionId: 'd1' }} onClose={() => undefined} />, api);
    const d = screen.getByRole('dialog');
    await userEvent.click(within(d).getByLabelText(/^Migrate/));
    expect(within(d).getByText('Target version: a version number')).toBeTruthy();
    await userEvent.type(within(d).getByLabelText(/Target version/), '2');
    await userEvent.type(within(d).getByLabelText(/Canary %/), '20');
    await userEvent.type(within(d).getByLabelText(/Max error rate %/), '5');
    await within(d).findByText('10 runs would be affected.');
    await userEvent.click(within(d).getByRole('button', { name: 'Migrate 10 runs' }));
    await within(d).findByText(/1 migrated · 1 refused · 8 remaining/);
    expect(within(d).getByTestId('bulk-paused').textContent).toMatch(/Paused after the canary/);
    expect((await within(d).findByTestId('bulk-refused')).textContent).toMatch(/needsMapping.*node 'q' is gone: map it/);
    await userEvent.click(within(d).getByRole('button', { name: 'Resume' }));
    await waitFor(() => expect(screen.getByTestId('bulk-progress').getAttribute('data-bulk-status')).toBe('Running'));
    expect(within(d).queryByTestId('bulk-paused')).toBeNull();
    const sent = api.sent.find((x) => x.route === 'POST /v1/runs/bulk' && !(x.body as { dryRun?: boolean }).dryRun)!;
    expect(sent.body).toEqual({ action: 'migrate', filter: { definitionId: 'd1' }, requestId: expect.stringMatching(UUID), toVersion: 2, canaryPercent: 20, maxErrorRate: 0.05 });
  }, 15_000);

  it('reads migrate fields and progress', () => {
    expect(migrateMembers({ toVersion: '3', canaryPercent: '', maxErrorRate: '' })).toEqual({ ok: true, body: { toVersion: 3 } });
    expect(migrateMembers({ toVersion: '3', canaryPercent: '100', maxErrorRate: '' })).toMatchObject({ ok: false });
    expect(migrateMembers({ toVersion: '3', canaryPercent: '10', maxErrorRate: '120' })).toMatchObject({ ok: false });
    expect(migrateProgressText({ total: 5, done: 5, failed: 0 })).toBe('5 migrated · 0 refused · 0 remaining');
  });
});
