// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderApp } from '../test/render';

const DEF = 'cccccccc-0000-4000-8000-000000000001';
const BUSY = 'bbbbbbbb-0000-4000-8000-000000000001';
const iso = '2026-01-01T00:00:00.000Z';
const chatGraph = {
  kind: 'Chat',
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'ask', kind: 'ChatInput', config: { prompt: 'and then?' } },
    { key: 'end', kind: 'End', config: { outcome: 'answered' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'ask' },
    { key: 'e2', from: 'ask', to: 'end' },
  ],
};
const run = (status: string) => ({
  id: BUSY, definitionId: DEF, status, failureClass: 'None', reason: null, paused: false, requestId: 'r', parentRunId: null,
  conversationId: 'conv-1', createdAt: iso, startedAt: iso, finishedAt: null, graphHash: 'h', lastSeq: 0,
});
const nodeRun = (nodeKey: string, status: string, pendingDecisionKind: string | null = null) => ({
  nodeKey, kind: 'ChatInput', status, attempt: 1, failureClass: 'None', reason: null, pendingDecisionKind, childRunId: null, startedAt: null, finishedAt: null,
});

function api(askStatus: string) {
  return fakeApi({
    'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read', 'run'], authRequired: true } }),
    'GET /v1/definitions': () => ({ body: { items: [{ id: DEF, name: 'chatty', description: null, kind: 'Chat', version: 1, nodeCount: 3, graphHash: 'h', createdAt: iso, updatedAt: iso }], nextCursor: null } }),
    'GET /v1/conversations': () => ({ body: { items: [{ id: 'conv-1', boundRunId: BUSY, definitionId: DEF, boundRunStatus: 'Running', createdAt: iso, updatedAt: iso }], nextCursor: null } }),
    'GET /v1/conversations/*/messages': () => ({
      body: {
        items: [
          { id: 'm1', role: 'user', text: 'hello', attachments: [], runId: BUSY, nodeKey: null, createdAt: iso },
          { id: 'm2', role: 'assistant', text: 'published answer', attachments: [], runId: BUSY, nodeKey: 'end', createdAt: iso },
        ],
        nextCursor: null,
      },
    }),
    'GET /v1/conversations/*/runs': () => ({ body: { items: [run('Running')], nextCursor: null } }),
    'GET /v1/runs/*': () => ({
      body: { run: run(askStatus === 'WaitingForApproval' ? 'WaitingForApproval' : 'Running'), nodeRuns: [nodeRun('ask', askStatus, askStatus === 'WaitingForApproval' ? 'Answer' : null)], output: null, graph: chatGraph },
    }),
  });
}

describe('the chat page', () => {
  it('shows the conversation’s messages, published answers included, and explains a 409 RunBusy with a link to the busy run', async () => {
    const a = api('Running');
    a.on('POST /v1/conversations/*/messages', () => ({ status: 409, body: { error: { code: 'RunBusy', message: 'the conversation has a live run', details: [{ runId: BUSY }] } } }));
    renderApp(`/console/chat?definitionId=${DEF}&conversationId=conv-1`, a);
    expect(await screen.findByText('published answer', {}, { timeout: 5000 })).toBeTruthy();
    expect(screen.getByText('hello').closest('li')!.getAttribute('data-role')).toBe('user');
    await userEvent.type(screen.getByLabelText('Message'), 'again');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('RunBusy');
    expect(alert.textContent).toContain('one run at a time');
    expect(alert.querySelector('a')!.getAttribute('href')).toBe(`/console/run?runId=${BUSY}`);
    const sent = a.sent.find((s) => s.route === 'POST /v1/conversations/conv-1/messages')!;
    expect(sent.body).toMatchObject({ definitionId: DEF, text: 'again', requestId: expect.any(String) });
  });

  it('answers the bound run’s waiting ChatInput instead of starting a run', async () => {
    const a = api('WaitingForApproval');
    a.on('POST /v1/runs/*/nodes/*/decide', () => ({ status: 202, body: { accepted: true } }));
    renderApp(`/console/chat?definitionId=${DEF}&conversationId=conv-1`, a);
    expect(await screen.findByText('and then?', {}, { timeout: 5000 })).toBeTruthy();
    await userEvent.type(screen.getByLabelText('Message'), 'the answer');
    await userEvent.click(screen.getByRole('button', { name: 'Answer' }));
    await waitFor(() => expect(a.sent.some((s) => s.route === `POST /v1/runs/${BUSY}/nodes/ask/decide`)).toBe(true));
    expect(a.sent.find((s) => s.route.endsWith('/decide'))!.body).toMatchObject({ decision: 'Answer', payload: { text: 'the answer' } });
    expect(a.sent.some((s) => s.route.startsWith('POST /v1/conversations'))).toBe(false);
  });

  it('shows a refused send as code: message', async () => {
    const a = api('Running');
    a.on('POST /v1/conversations/*/messages', () => refuse(400, 'AttachmentsNotAccepted', 'this Chat graph does not accept attachments'));
    renderApp(`/console/chat?definitionId=${DEF}&conversationId=conv-1`, a);
    await userEvent.type(await screen.findByLabelText('Message', {}, { timeout: 5000 }), 'x');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect((await screen.findByRole('alert')).textContent).toContain('AttachmentsNotAccepted');
  });
});
