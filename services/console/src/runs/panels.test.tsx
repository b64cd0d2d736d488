// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { NodeRunDetail, RunControls, RunSummary } from '@flowline/client';
import { fakeApi, refuse } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { DecisionPanel } from './DecisionPanel';
import { NodeActions } from './NodeActions';
import { RunActions } from './RunActions';
import { EdgePanel } from './EdgePanel';
import { EventsTab } from './EventsTab';
import { clockText } from '../ui/primitives';

const RUN = '11111111-2222-4333-8444-555555555555';
const accepted = () => ({ status: 202, body: { accepted: true } });
const pause = (config: Record<string, unknown>) => ({ key: 'review', kind: 'Pause', label: 'Review', config });

const summary = (over: Partial<RunSummary> = {}): RunSummary => ({
  id: RUN, definitionId: 'd', definitionVersion: 1, status: 'Running', failureClass: 'None', reason: null, paused: false, requestId: null,
  parentRunId: null, conversationId: null, createdAt: '2026-01-01T00:00:00Z', startedAt: null, finishedAt: null, graphHash: 'h', lastSeq: 0, ...over,
});
const controls = (over: Partial<RunControls> = {}): RunControls => ({ paused: false, breakpoints: [], edgeOverrides: {}, step: null, ...over });

describe('the decision panel', () => {
  it('offers the pinned gate’s allowed decisions and sends one act with the same id as operationId and Idempotency-Key', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/decide': accepted });
    renderInSession(<DecisionPanel runId={RUN} docNode={pause({ prompt: 'Ship it?', allowedDecisions: ['Approve'] })} pendingDecisionKind="Approve" />, api);
    expect(screen.getByText('Ship it?')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Reject' })).toBeNull();
    await userEvent.type(screen.getByLabelText(/Comment/), 'looks fine');
    await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(api.sent.filter((s) => s.route.endsWith('/decide'))).toHaveLength(1));
    const sent = api.sent.find((s) => s.route.endsWith('/decide'))!;
    expect(sent.route).toBe(`POST /v1/runs/${RUN}/nodes/review/decide`);
    const body = sent.body as { operationId: string; decision: string; comment: string };
    expect(body).toMatchObject({ decision: 'Approve', comment: 'looks fine' });
    expect(sent.headers.get('idempotency-key')).toBe(body.operationId);
  });

  it('holds the decision until a required comment is written', async () => {
    renderInSession(<DecisionPanel runId={RUN} docNode={pause({ prompt: 'p', allowedDecisions: ['Approve', 'Reject'], requireComment: true })} pendingDecisionKind="Approve" />);
    const approve = screen.getByRole('button', { name: 'Approve' }) as HTMLButtonElement;
    expect(approve.disabled).toBe(true);
    await userEvent.type(screen.getByLabelText(/Comment/), 'why');
    expect(approve.disabled).toBe(false);
  });

  it('shows a refused decision as code: message', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/decide': () => refuse(409, 'GateAlreadyDecided', 'the gate was already decided: Reject') });
    renderInSession(<DecisionPanel runId={RUN} docNode={pause({ prompt: 'p', allowedDecisions: ['Approve', 'Reject'] })} pendingDecisionKind="Approve" />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('GateAlreadyDecided');
    expect(alert.textContent).toContain('the gate was already decided: Reject');
  });

  it('answers a ChatInput with its text', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/decide': accepted });
    renderInSession(<DecisionPanel runId={RUN} docNode={{ key: 'ask', kind: 'ChatInput', label: 'ask', config: { prompt: 'and then?' } }} pendingDecisionKind="Answer" />, api);
    await userEvent.type(screen.getByLabelText('Your answer'), 'the answer');
    await userEvent.click(screen.getByRole('button', { name: 'Send answer' }));
    await waitFor(() => expect(api.sent.some((s) => s.route.endsWith('/decide'))).toBe(true));
    expect(api.sent.find((s) => s.route.endsWith('/decide'))!.body).toMatchObject({ decision: 'Answer', payload: { text: 'the answer' } });
  });

  it('shows a key without the run scope what the gate waits for, and no button', () => {
    renderInSession(<DecisionPanel runId={RUN} docNode={pause({ prompt: 'Ship it?', allowedDecisions: ['Approve', 'Reject'] })} pendingDecisionKind="Approve" />, fakeApi(), ['read']);
    expect(screen.getByText('Ship it?')).toBeTruthy();
    expect(screen.queryAllByRole('button')).toHaveLength(0);
  });
});

describe('node actions', () => {
  const base = { runId: RUN, nodeKey: 'slow', kind: 'Tool', pendingDecisionKind: null, runLive: true, detail: undefined as NodeRunDetail | undefined };

  it('are hidden from a key without the operate scope', () => {
    const { container } = renderInSession(<NodeActions {...base} status="Pending" controls={controls()} />, fakeApi(), ['read', 'run']);
    expect(container.textContent).toBe('');
  });

  it('offer what the node’s state allows', () => {
    renderInSession(<NodeActions {...base} status="Failed" controls={controls()} />);
    const names = screen.getAllByRole('button').map((b) => b.textContent?.trim());
    expect(names).toEqual(['Breakpoint', 'Retry', 'Complete…', 'Fork from here…']);
  });

  it('skip a pending node and show the refusal when the node moved on', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/skip': () => refuse(409, 'NodeStateConflict', 'node is Running, not Pending') });
    renderInSession(<NodeActions {...base} status="Pending" controls={controls()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Skip' }));
    expect((await screen.findByRole('alert')).textContent).toContain('NodeStateConflict');
    expect(screen.getByRole('alert').textContent).toContain('node is Running, not Pending');
    expect(api.sent.find((s) => s.route.endsWith('/skip'))!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('toggle a breakpoint on top of the run’s other breakpoints', async () => {
    const api = fakeApi({ 'PUT /v1/runs/*/breakpoints': ({ body }) => ({ body }) });
    renderInSession(<NodeActions {...base} status="Pending" controls={controls({ breakpoints: ['other'] })} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Breakpoint' }));
    await waitFor(() => expect(api.sent.some((s) => s.route.endsWith('/breakpoints'))).toBe(true));
    expect(api.sent.find((s) => s.route.endsWith('/breakpoints'))!.body).toEqual({ nodeKeys: ['other', 'slow'] });
  });

  it('complete a node with a JSON payload, keeping the dialog open on a refusal', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/complete': () => refuse(409, 'NodeStateConflict', 'node is Succeeded') });
    renderInSession(<NodeActions {...base} status="Running" controls={controls()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Complete…' }));
    const dialog = screen.getByRole('dialog');
    const input = within(dialog).getByLabelText('Output');
    await userEvent.clear(input);
    await userEvent.type(input, '{{"by": "me"}');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Complete node' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('NodeStateConflict');
    expect(api.sent.find((s) => s.route.endsWith('/complete'))!.body).toEqual({ output: { by: 'me' } });
  });

  it('steer a running LLM node with a message carrying its operationId', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/nodes/*/steer': () => refuse(409, 'SteerLimitReached', 'this node already holds 5 steering entries') });
    renderInSession(<NodeActions {...base} kind="LlmCall" status="Running" controls={controls()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Steer…' }));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText('Message'), 'be brief');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Send steering' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('SteerLimitReached');
    const sent = api.sent.find((s) => s.route.endsWith('/steer'))!;
    expect(sent.body).toMatchObject({ message: 'be brief' });
    expect(sent.headers.get('idempotency-key')).toBe((sent.body as { operationId: string }).operationId);
  });
});

describe('run actions', () => {
  it('cancel after a confirmation, with the reason, and show a refusal', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/cancel': () => refuse(404, 'NotFound', 'run not found') });
    renderInSession(<RunActions run={summary()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Cancel run' }));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText(/Reason/), 'wrong input');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel run' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('NotFound');
    expect(api.sent.find((s) => s.route.endsWith('/cancel'))!.body).toEqual({ reason: 'wrong input' });
  });

  it('pause a running run; step, resume or migrate a paused one; offer nothing on a finished run or to a read key', async () => {
    const api = fakeApi({ 'POST /v1/runs/*/pause': () => refuse(409, 'RunStateConflict', 'run is Cancelling') });
    const { unmount } = renderInSession(<RunActions run={summary()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Pause' }));
    expect((await screen.findByRole('alert')).textContent).toContain('RunStateConflict');
    unmount();
    const paused = renderInSession(<RunActions run={summary({ paused: true })} />);
    expect(paused.getAllByRole('button').map((b) => b.textContent)).toEqual(['Step one', 'Step wave', 'Resume', 'Migrate…', 'Cancel run']);
    paused.unmount();
    expect(renderInSession(<RunActions run={summary({ status: 'Completed' })} />).container.textContent).toBe('');
    expect(renderInSession(<RunActions run={summary()} />, fakeApi(), ['read']).container.textContent).toBe('');
  });
});

describe('the edge panel', () => {
  const edge = { key: 'gd', from: 'gate', to: 'd', label: null, condition: { path: 'output.decision', op: 'Eq', value: 'Approve' }, isDefault: false };

  it('forces an edge’s verdict and shows the standing override', async () => {
    const api = fakeApi({ 'PUT /v1/runs/*/edges/*/override': ({ body }) => ({ body: { edgeKey: 'gd', ...(body as object) } }) });
    renderInSession(<EdgePanel runId={RUN} edge={edge} controls={controls({ edgeOverrides: { gd: true } })} runLive onClose={() => undefined} />, api);
    expect(screen.getByText('forced true')).toBeTruthy();
    expect(screen.getByText('output.decision Eq "Approve"')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Force false' }));
    await waitFor(() => expect(api.sent.some((s) => s.route.endsWith('/override'))).toBe(true));
    expect(api.sent.find((s) => s.route.endsWith('/override'))!.body).toEqual({ verdict: false });
  });

  it('shows a refused override', async () => {
    const api = fakeApi({ 'PUT /v1/runs/*/edges/*/override': () => refuse(409, 'RunStateConflict', 'run is Completed') });
    renderInSession(<EdgePanel runId={RUN} edge={edge} controls={controls()} runLive onClose={() => undefined} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Force true' }));
    expect((await screen.findByRole('alert')).textContent).toContain('RunStateConflict');
  });
});

describe('the events tab', () => {
  const event = (seq: number) => ({ seq, kind: seq === 1 ? 'run.created' : 'node.queued', nodeKey: seq === 1 ? null : `n${seq}`, at: '2026-01-01T00:00:00Z', detail: {} });

  it('pages forward from afterSeq 0 and says the newest events are missing while a page was truncated', async () => {
    const api = fakeApi({
      'GET /v1/runs/*/events': ({ url }) => {
        const after = Number(url.searchParams.get('afterSeq') ?? 0);
        return after === 0 ? { body: { events: [1, 2, 3].map(event), limit: 3, truncated: true } } : { body: { events: [4, 5].map(event), limit: 3, truncated: false } };
      },
    });
    renderInSession(<EventsTab runId={RUN} pollMs={false} />, api);
    const banner = await screen.findByText(/newer events exist and are not shown yet/);
    expect(banner.textContent).toContain('first 3 events');
    await userEvent.click(screen.getByRole('button', { name: 'Load newer events' }));
    await waitFor(() => expect(screen.getAllByRole('listitem')).toHaveLength(5));
    expect(api.calls.filter((c) => c.includes('/events'))).toEqual([`GET /v1/runs/${RUN}/events?afterSeq=0`, `GET /v1/runs/${RUN}/events?afterSeq=3`]);
    expect(screen.queryByText(/newer events exist/)).toBeNull();
  });

  it('shows each event at its wall-clock time to the millisecond, the full date on hover, and the gap to the one before', async () => {
    const at = ['2026-01-01T10:04:05.007Z', '2026-01-01T10:04:05.991Z', '2026-01-01T10:04:17.400Z'];
    const api = fakeApi({ 'GET /v1/runs/*/events': () => ({ body: { events: at.map((t, i) => ({ ...event(i + 1), at: t })), limit: 100, truncated: false } }) });
    renderInSession(<EventsTab runId={RUN} pollMs={false} />, api);
    await waitFor(() => expect(screen.getAllByRole('listitem')).toHaveLength(3));
    const times = [...document.querySelectorAll('time.event-at')];
    expect(times.map((t) => t.textContent)).toEqual(at.map((t) => clockText(t)));
    expect(times[0]!.textContent).toMatch(/^\d{2}:\d{2}:\d{2}\.007$/);
    expect(times[0]!.getAttribute('title')).toContain(new Date(at[0]!).toLocaleString());
    expect([...document.querySelectorAll('.event-gap')].map((g) => g.textContent)).toEqual(['', '+984 ms', '+11.4 s']);
  });

  it('shows a refused read', async () => {
    renderInSession(<EventsTab runId={RUN} pollMs={false} />, fakeApi({ 'GET /v1/runs/*/events': () => refuse(403, 'Forbidden', "this key lacks the 'read' scope") }));
    expect((await screen.findByRole('alert')).textContent).toContain('Forbidden');
  });
});
