// @vitest-environment happy-dom
/**
 * Every operator verb of the run view, one table: each act sends an `Idempotency-Key`
 * (a fresh UUID chosen when the operator acts; the same id as the body's `operationId`
 * where the contract has one), and each refusal is shown as `code: message`, never
 * swallowed.
 */
import type { ReactElement } from 'react';
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { RunControls, RunSummary } from '@flowline/client';
import { fakeApi, refuse } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { DecisionPanel } from './DecisionPanel';
import { EdgePanel } from './EdgePanel';
import { NodeActions } from './NodeActions';
import { RunActions } from './RunActions';

const RUN = '11111111-2222-4333-8444-555555555555';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const summary = (over: Partial<RunSummary> = {}): RunSummary => ({
  id: RUN, definitionId: 'd', definitionVersion: 1, status: 'Running', failureClass: 'None', reason: null, paused: false, requestId: null,
  parentRunId: null, conversationId: null, createdAt: '2026-01-01T00:00:00Z', startedAt: null, finishedAt: null, graphHash: 'h', lastSeq: 0, ...over,
});
const controls = (over: Partial<RunControls> = {}): RunControls => ({ paused: false, breakpoints: [], edgeOverrides: {}, step: null, ...over });
const node = { runId: RUN, nodeKey: 'slow', kind: 'Tool', pendingDecisionKind: null, runLive: true, detail: undefined };
const edge = { key: 'gd', from: 'gate', to: 'd', label: null, condition: null, isDefault: false };

/** Clicks `name`, then (in the dialog it opened) fills `fill` and clicks `submit`. */
async function act(name: string, dialog?: { fill?: [label: RegExp | string, text: string]; submit: string }) {
  await userEvent.click(screen.getByRole('button', { name }));
  if (!dialog) return;
  const d = screen.getByRole('dialog');
  if (dialog.fill) {
    const field = within(d).getByLabelText(dialog.fill[0]);
    await userEvent.clear(field);
    await userEvent.type(field, dialog.fill[1]);
  }
  await userEvent.click(within(d).getByRole('button', { name: dialog.submit }));
}

interface Verb {
  verb: string;
  route: string;
  ui: () => ReactElement;
  go: () => Promise<void>;
  body?: unknown;
  /** the contract carries the act's id in the body too */
  operationIdInBody?: boolean;
}

const VERBS: Verb[] = [
  { verb: 'pause', route: `POST /v1/runs/${RUN}/pause`, ui: () => <RunActions run={summary()} />, go: () => act('Pause') },
  { verb: 'resume', route: `POST /v1/runs/${RUN}/resume`, ui: () => <RunActions run={summary({ paused: true })} />, go: () => act('Resume') },
  { verb: 'step one', route: `POST /v1/runs/${RUN}/step`, ui: () => <RunActions run={summary({ paused: true })} />, go: () => act('Step one'), body: { mode: 'one' } },
  { verb: 'step wave', route: `POST /v1/runs/${RUN}/step`, ui: () => <RunActions run={summary({ paused: true })} />, go: () => act('Step wave'), body: { mode: 'wave' } },
  {
    verb: 'cancel',
    route: `POST /v1/runs/${RUN}/cancel`,
    ui: () => <RunActions run={summary()} />,
    go: () => act('Cancel run', { fill: [/Reason/, 'no longer needed'], submit: 'Cancel run' }),
    body: { reason: 'no longer needed' },
  },
  {
    verb: 'step node',
    route: `POST /v1/runs/${RUN}/step`,
    ui: () => <NodeActions {...node} status="Pending" controls={controls({ paused: true })} />,
    go: () => act('Step this node'),
    body: { mode: 'node', nodeKey: 'slow' },
  },
  {
    verb: 'breakpoint',
    route: `PUT /v1/runs/${RUN}/breakpoints`,
    ui: () => <NodeActions {...node} status="Pending" controls={controls()} />,
    go: () => act('Breakpoint'),
    body: { nodeKeys: ['slow'] },
  },
  { verb: 'skip', route: `POST /v1/runs/${RUN}/nodes/slow/skip`, ui: () => <NodeActions {...node} status="Pending" controls={controls()} />, go: () => act('Skip') },
  { verb: 'retry', route: `POST /v1/runs/${RUN}/nodes/slow/retry`, ui: () => <NodeActions {...node} status="Failed" controls={controls()} />, go: () => act('Retry') },
  {
    verb: 'complete',
    route: `POST /v1/runs/${RUN}/nodes/slow/complete`,
    ui: () => <NodeActions {...node} status="Running" controls={controls()} />,
    go: () => act('Complete…', { fill: ['Output', '{{"ok": true}'], submit: 'Complete node' }),
    body: { output: { ok: true } },
  },
  {
    verb: 'edit input',
    route: `PUT /v1/runs/${RUN}/nodes/slow/input`,
    ui: () => <NodeActions {...node} status="Pending" controls={controls()} />,
    go: () => act('Edit input…', { fill: ['Input', '{{"n": 2}'], submit: 'Save input' }),
    body: { input: { n: 2 } },
  },
  {
    verb: 'steer',
    route: `POST /v1/runs/${RUN}/nodes/slow/steer`,
    ui: () => <NodeActions {...node} kind="Agent" status="Running" controls={controls()} />,
    go: () => act('Steer…', { fill: ['Message', 'be brief'], submit: 'Send steering' }),
    body: { message: 'be brief' },
    operationIdInBody: true,
  },
  {
    verb: 'fork',
    route: `POST /v1/runs/${RUN}/fork`,
    ui: () => <NodeActions {...node} status="Failed" controls={controls()} />,
    go: () => act('Fork from here…', { submit: 'Fork run' }),
    body: { fromNodeKey: 'slow' },
  },
  {
    verb: 'edge override',
    route: `PUT /v1/runs/${RUN}/edges/gd/override`,
    ui: () => <EdgePanel runId={RUN} edge={edge} controls={controls()} runLive onClose={() => undefined} />,
    go: () => act('Force true'),
    body: { verdict: true },
  },
  {
    verb: 'decide',
    route: `POST /v1/runs/${RUN}/nodes/review/decide`,
    ui: () => (
      <DecisionPanel runId={RUN} docNode={{ key: 'review', kind: 'Pause', label: 'Review', config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } }} pendingDecisionKind="Approve" />
    ),
    go: () => act('Reject'),
    body: { decision: 'Reject' },
    operationIdInBody: true,
  },
  {
    verb: 'answer (ChatInput)',
    route: `POST /v1/runs/${RUN}/nodes/ask/decide`,
    ui: () => <DecisionPanel runId={RUN} docNode={{ key: 'ask', kind: 'ChatInput', label: 'ask', config: { prompt: 'and?' } }} pendingDecisionKind="Answer" />,
    go: async () => {
      await userEvent.type(screen.getByLabelText('Your answer'), 'this');
      await act('Send answer');
    },
    body: { decision: 'Answer', payload: { text: 'this' } },
    operationIdInBody: true,
  },
];

describe('every operator verb', () => {
  it.each(VERBS)('$verb sends an Idempotency-Key and shows its refusal as code: message', async (v) => {
    const code = `Refused${v.verb.replace(/\W/g, '')}`;
    const [method, path] = v.route.split(' ') as [string, string];
    const api = fakeApi({ [`${method} ${path}`]: () => refuse(409, code, `${v.verb} is not allowed now`) });
    renderInSession(v.ui(), api);
    await v.go();
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain(code);
    expect(alert.textContent).toContain(`${v.verb} is not allowed now`);
    const sent = api.sent.filter((s) => s.route === `${method} ${path}`);
    expect(sent).toHaveLength(1);
    const key = sent[0]!.headers.get('idempotency-key');
    expect(key).toMatch(UUID);
    if (v.body !== undefined) expect(sent[0]!.body).toMatchObject(v.body as object);
    if (v.operationIdInBody) expect((sent[0]!.body as { operationId?: string }).operationId).toBe(key);
  });

  it('gives each act its own id: acting twice sends two keys', async () => {
    const api = fakeApi({ [`POST /v1/runs/${RUN}/nodes/slow/skip`]: () => refuse(409, 'NodeStateConflict', 'node is Running') });
    renderInSession(<NodeActions {...node} status="Pending" controls={controls()} />, api);
    await act('Skip');
    await screen.findByRole('alert');
    await act('Skip');
    await waitFor(() => expect(api.sent.filter((s) => s.route.endsWith('/skip'))).toHaveLength(2));
    const keys = api.sent.filter((s) => s.route.endsWith('/skip')).map((s) => s.headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(2);
  });
});

describe('fork from a node', () => {
  it('sends the edited input or failedOnly, under one key per dialog, and hands the new run on', async () => {
    const NEW = '99999999-2222-4333-8444-555555555555';
    const api = fakeApi({ [`POST /v1/runs/${RUN}/fork`]: () => ({ status: 202, body: { runId: NEW, forkedFrom: { runId: RUN, nodeKey: 'slow' } } }) });
    const forked: string[] = [];
    const detail = { nodeKey: 'slow', kind: 'Tool', status: 'Failed', attempt: 1, failureClass: 'NodeFailed', reason: 'boom', pendingDecisionKind: null, childRunId: null, input: { run: { input: {} }, upstream: {}, input: { n: 1 } }, output: null, error: null, steering: [] } as never;
    renderInSession(<NodeActions {...node} status="Failed" controls={controls()} detail={detail} onForked={(r) => forked.push(r)} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Fork from here…' }));
    const d = screen.getByRole('dialog');
    await userEvent.click(within(d).getByLabelText(/edited input/));
    // failedOnly cannot go with an edited input (the server refuses the pair): it is disabled
    expect((within(d).getByLabelText(/Only what failed/) as HTMLInputElement).disabled).toBe(true);
    const field = within(d).getByLabelText('Input');
    expect(JSON.parse((field as HTMLTextAreaElement).value)).toEqual({ n: 1 });
    await userEvent.clear(field);
    await userEvent.type(field, '{{"n": 2}');
    await userEvent.click(within(d).getByRole('button', { name: 'Fork run' }));
    await waitFor(() => expect(forked).toEqual([NEW]));
    const first = api.sent.find((s) => s.route.endsWith('/fork'))!;
    expect(first.body).toEqual({ fromNodeKey: 'slow', input: { n: 2 } });
    expect(first.headers.get('idempotency-key')).toMatch(UUID);
    // not JSON: the dialog says so and sends nothing
    await userEvent.click(screen.getByRole('button', { name: 'Fork from here…' }));
    const d2 = screen.getByRole('dialog');
    await userEvent.click(within(d2).getByLabelText(/Only what failed/));
    await userEvent.click(within(d2).getByRole('button', { name: 'Fork run' }));
    await waitFor(() => expect(forked).toHaveLength(2));
    const second = api.sent.filter((s) => s.route.endsWith('/fork'))[1]!;
    expect(second.body).toEqual({ fromNodeKey: 'slow', failedOnly: true });
    expect(second.headers.get('idempotency-key')).not.toBe(first.headers.get('idempotency-key'));
  });

  it('refuses to send an input that is not JSON', async () => {
    const api = fakeApi();
    renderInSession(<NodeActions {...node} status="Failed" controls={controls()} />, api);
    await userEvent.click(screen.getByRole('button', { name: 'Fork from here…' }));
    const d = screen.getByRole('dialog');
    await userEvent.click(within(d).getByLabelText(/edited input/));
    const field = within(d).getByLabelText('Input');
    await userEvent.clear(field);
    await userEvent.type(field, '{{nope');
    expect(within(d).getByText(/Not JSON/)).toBeTruthy();
    expect((within(d).getByRole('button', { name: 'Fork run' }) as HTMLButtonElement).disabled).toBe(true);
    expect(api.sent.filter((s) => s.route.endsWith('/fork'))).toHaveLength(0);
  });
});
