// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderApp } from '../test/render';

const DEF = 'dddddddd-0000-4000-8000-000000000001';
const RUN = 'rrrrrrrr-0000-4000-8000-000000000001'.replace(/r/g, 'a');
const iso = '2026-01-01T00:00:00.000Z';
const graph = {
  nodes: [
    { key: 'start', kind: 'Start', config: { defaultInput: { requiresReview: true } } },
    { key: 'review', kind: 'Pause', label: 'Human review', config: { prompt: 'Approve the analysis?', allowedDecisions: ['Approve', 'Reject'] } },
    { key: 'done', kind: 'End', config: { outcome: 'completed' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'review' },
    { key: 'e2', from: 'review', to: 'done', condition: { path: 'output.decision', op: 'Eq', value: 'Approve' } },
  ],
};
const definition = { id: DEF, name: 'canonical', description: 'the canonical graph', kind: 'Standard', version: 2, nodeCount: 3, graphHash: 'h-now', createdAt: iso, updatedAt: iso };
const run = (status: string) => ({
  id: RUN, definitionId: DEF, status, failureClass: 'None', reason: null, paused: false, requestId: 'r', parentRunId: null,
  conversationId: null, createdAt: iso, startedAt: iso, finishedAt: null, graphHash: 'h-then', lastSeq: 0, definitionVersion: 1,
});
const nodeRun = (nodeKey: string, kind: string, status: string, pendingDecisionKind: string | null = null) => ({
  nodeKey, kind, status, attempt: status === 'Pending' ? 0 : 1, failureClass: 'None', reason: null, pendingDecisionKind, childRunId: null, startedAt: null, finishedAt: null,
});

function api() {
  return fakeApi({
    'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define'], authRequired: false } }),
    'GET /v1/definitions': () => ({ body: { items: [definition], nextCursor: null } }),
    'GET /v1/definitions/*': () => ({ body: { ...definition, graph } }),
    'GET /v1/runs': ({ url }) => ({ body: { items: url.searchParams.get('status') === 'Failed' ? [] : [run('WaitingForApproval')], nextCursor: null } }),
    'GET /v1/runs/*': () => ({
      body: { run: run('WaitingForApproval'), nodeRuns: [nodeRun('start', 'Start', 'Succeeded'), nodeRun('review', 'Pause', 'WaitingForApproval', 'Approve'), nodeRun('done', 'End', 'Pending')], output: null, graph },
    }),
    'GET /v1/runs/*/controls': () => ({ body: { paused: false, breakpoints: [], edgeOverrides: {}, step: null } }),
    'GET /v1/runs/*/nodes/*': () => ({
      body: { ...nodeRun('review', 'Pause', 'WaitingForApproval', 'Approve'), input: null, output: null, error: null, steering: [], notBefore: null },
    }),
    'GET /v1/runs/*/events': () => ({ body: { events: [], limit: 200, truncated: false } }),
  });
}

describe('the runs list', () => {
  it('reads its filters from the URL and sends them to the API', async () => {
    const a = api();
    renderApp('/console/runs?status=Failed', a);
    expect(await screen.findByText('No run matches these filters')).toBeTruthy();
    const asked = a.calls.filter((c) => c.startsWith('GET /v1/runs?')).map((c) => Object.fromEntries(new URLSearchParams(c.slice(c.indexOf('?') + 1))));
    expect(asked).toContainEqual({ status: 'Failed', limit: '50' });
    expect((screen.getByLabelText('Status') as HTMLSelectElement).value).toBe('Failed');
  });

  it('filters by failure class and metadata pairs, kept in the URL, and offers a bulk action only with a filter', async () => {
    const a = api();
    const { history } = renderApp('/console/runs', a);
    await screen.findByRole('button', { name: 'Act on matching runs…' });
    expect((screen.getByRole('button', { name: 'Act on matching runs…' }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.selectOptions(screen.getByLabelText('Failure'), 'Timeout');
    const meta = screen.getByLabelText('Metadata');
    await userEvent.type(meta, 'nope{Enter}');
    expect(screen.getByText('Write a pair as key:value')).toBeTruthy();
    await userEvent.clear(meta);
    await userEvent.type(meta, 'batch:n-42{Enter}');
    await waitFor(() => expect(a.calls.some((c) => c.includes('metadata=batch%3An-42') && c.includes('failureClass=Timeout'))).toBe(true));
    expect(history.location.search).toContain('failureClass=Timeout');
    expect(decodeURIComponent(history.location.search)).toContain('batch:n-42');
    expect((screen.getByRole('button', { name: 'Act on matching runs…' }) as HTMLButtonElement).disabled).toBe(false);
    await userEvent.click(screen.getByRole('button', { name: 'Remove filter batch:n-42' }));
    await waitFor(() => expect(decodeURIComponent(history.location.search)).not.toContain('batch:n-42'));
  });

  it('lists runs newest first with their status and definition name, linking each to its view', async () => {
    renderApp('/console/runs', api());
    await screen.findAllByText('canonical');
    const row = await waitFor(() => document.querySelector<HTMLElement>(`tr[data-run-id="${RUN}"]`)!);
    expect(row.getAttribute('data-status')).toBe('WaitingForApproval');
    expect(within(row).getByRole('link').getAttribute('href')).toBe(`/console/run?runId=${RUN}`);
  });

  it('notes a run’s reason, and its failure class only where the status does not already say it', async () => {
    const a = api();
    a.on('GET /v1/runs', () => ({
      body: {
        items: [
          { ...run('Cancelled'), failureClass: 'Cancelled', reason: 'not needed' },
          { ...run('Failed'), id: RUN.replace(/a/g, 'b'), failureClass: 'Timeout', reason: 'node slow timed out' },
        ],
        nextCursor: null,
      },
    }));
    renderApp('/console/runs', a);
    const cancelled = await waitFor(() => {
      const tr = document.querySelector<HTMLElement>(`tr[data-run-id="${RUN}"]`);
      if (!tr) throw new Error('no row yet');
      return tr;
    });
    const notes = cancelled.querySelector('td:last-child')!.textContent!;
    expect(notes).toContain('not needed');
    expect(notes).not.toContain('Cancelled');
    const failed = document.querySelector<HTMLElement>(`tr[data-run-id="${RUN.replace(/a/g, 'b')}"]`)!;
    expect(failed.querySelector('td:last-child')!.textContent).toContain('Timeout');
    expect(failed.querySelector('td:last-child')!.textContent).toContain('node slow timed out');
  });
});

describe('starting a run from a definition', () => {
  it('prefills the input from the Start node’s defaultInput and shows a refusal as code: message', async () => {
    const a = api();
    a.on('POST /v1/definitions/*/runs', () => refuse(400, 'InputInvalid', 'run input does not match the inputSchema'));
    renderApp('/console/definitions', a);
    await userEvent.click(await screen.findByRole('link', { name: 'Start run of canonical' }));
    const dialog = await screen.findByRole('dialog');
    const input = (await within(dialog).findByLabelText('Run input (JSON)')) as HTMLTextAreaElement;
    expect(JSON.parse(input.value)).toEqual({ requiresReview: true });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Start run' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('InputInvalid');
    const sent = a.sent.find((s) => s.route === `POST /v1/definitions/${DEF}/runs`)!;
    const body = sent.body as { requestId: string; input: unknown };
    expect(body.input).toEqual({ requiresReview: true });
    expect(sent.headers.get('idempotency-key')).toBe(body.requestId);
  });
});

describe('the run view', () => {
  it('draws the pinned graph with live statuses, says the definition changed, and answers the Pause from the pinned graph', async () => {
    const a = api();
    a.on('POST /v1/runs/*/nodes/*/decide', () => ({ status: 202, body: { accepted: true } }));
    renderApp(`/console/run?runId=${RUN}&nodeKey=review`, a);
    // the run view is a lazy chunk: give it time to load
    const notice = await screen.findByTestId('definition-changed', {}, { timeout: 15_000 });
    expect(notice.textContent).toContain('has changed since this run started');
    // the definitions index named the current hash: the definition itself is not read
    expect(a.calls.some((c) => c.startsWith(`GET /v1/definitions/${DEF}`))).toBe(false);
    // the version the run pinned opens read-only in the editor
    expect(screen.getByRole('link', { name: 'v1' }).getAttribute('href')).toBe(`/console/editor?definitionId=${DEF}&version=1`);
    await waitFor(() => expect(document.querySelector('[data-node-key="review"].graph-node')?.getAttribute('data-status')).toBe('WaitingForApproval'));
    const panel = document.querySelector('[data-node-panel="review"]') as HTMLElement;
    expect(within(panel).getByText('Approve the analysis?')).toBeTruthy();
    await userEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(a.sent.some((s) => s.route === `POST /v1/runs/${RUN}/nodes/review/decide`)).toBe(true));
  });

  it('reads the definition for the changed-definition notice when the index does not list it', async () => {
    const a = api();
    a.on('GET /v1/definitions', () => ({ body: { items: [], nextCursor: null } }));
    renderApp(`/console/run?runId=${RUN}`, a);
    const notice = await screen.findByTestId('definition-changed', {}, { timeout: 15_000 });
    expect(notice.textContent).toContain('now v2');
    expect(a.calls.some((c) => c.startsWith(`GET /v1/definitions/${DEF}`))).toBe(true);
  });

  it('shows when a Scheduled run (a delayed start) starts, and the schedule that started a run', async () => {
    const a = api();
    const later = new Date(Date.now() + 3 * 3_600_000).toISOString();
    a.on('GET /v1/runs/*', () => ({
      body: { run: { ...run('Scheduled'), startedAt: null, notBefore: later, scheduleId: 'ssssssss-0000-4000-8000-000000000001'.replace(/s/g, 'e') }, nodeRuns: [nodeRun('start', 'Start', 'Pending'), nodeRun('review', 'Pause', 'Pending'), nodeRun('done', 'End', 'Pending')], output: null, graph },
    }));
    renderApp(`/console/run?runId=${RUN}`, a);
    const due = await waitFor(() => {
      const el = document.querySelector(`[data-not-before="${later}"]`);
      if (!el) throw new Error('no notBefore shown');
      return el;
    }, { timeout: 15_000 });
    expect(due.textContent).toMatch(/starts in 3 hours/);
    expect(screen.getByText('Scheduled')).toBeTruthy();
    expect(screen.getByText('eeeeeeee').getAttribute('href')).toBe('/console/schedules');
  });

  it('selects a graph node from the keyboard: Tab reaches it, Enter opens its panel', async () => {
    const view = renderApp(`/console/run?runId=${RUN}`, api());
    await waitFor(() => expect(document.querySelector('.react-flow__node[data-id="review"]')).toBeTruthy(), { timeout: 15_000 });
    const node = document.querySelector('.react-flow__node[data-id="review"]') as HTMLElement;
    expect(node.getAttribute('tabindex')).toBe('0');
    node.focus();
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(view.history.location.search).toContain('nodeKey=review'));
    expect(await screen.findByRole('complementary', { name: 'Node review' })).toBeTruthy();
  });

  it('says the run view polls only when it is not followed live, and never repeats the header’s Live', async () => {
    renderApp(`/console/run?runId=${RUN}`, api());
    const head = await waitFor(
      () => {
        const el = document.querySelector<HTMLElement>('[data-live-mode]');
        if (!el) throw new Error('no run head yet');
        return el;
      },
      { timeout: 15_000 },
    );
    // component tests have no socket: the run view polls, and says so once
    expect(head.getAttribute('data-live-mode')).toBe('polling');
    expect(await screen.findByText('Polling every 3 s')).toBeTruthy();
    expect(screen.queryAllByText('Live', { exact: true }).length).toBeLessThanOrEqual(1);
  });

  it('keeps the selected tab in the URL', async () => {
    const view = renderApp(`/console/run?runId=${RUN}&tab=events`, api());
    expect((await screen.findByRole('tab', { name: 'Events' })).getAttribute('aria-selected')).toBe('true');
    await userEvent.click(screen.getByRole('tab', { name: /Nodes/ }));
    await waitFor(() => expect(view.history.location.search).toContain('tab=nodes'));
  });
});
