// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderApp } from '../test/render';

const DEF = 'cccccccc-0000-4000-8000-000000000002';
const RUN = 'bbbbbbbb-0000-4000-8000-000000000002';
const iso = '2026-01-01T00:00:00.000Z';
const graphOf = (chat: unknown, extra: unknown[] = []) => ({
  kind: 'Chat',
  ...(chat ? { chat } : {}),
  nodes: [{ key: 'start', kind: 'Start' }, ...extra, { key: 'end', kind: 'End', config: { outcome: 'answered' } }],
  edges: [{ key: 'e1', from: 'start', to: 'end' }],
});
const summary = { id: DEF, name: 'filer', description: null, kind: 'Chat', version: 1, nodeCount: 2, graphHash: 'h', createdAt: iso, updatedAt: iso };
const run = (status: string) => ({
  id: RUN, definitionId: DEF, status, failureClass: 'None', reason: null, paused: false, requestId: 'r', parentRunId: null,
  conversationId: 'conv-9', createdAt: iso, startedAt: iso, finishedAt: iso, graphHash: 'h', lastSeq: 0,
});
const nodeRun = (nodeKey: string, kind: string, status: string) => ({
  nodeKey, kind, status, attempt: 1, failureClass: 'None', reason: null, pendingDecisionKind: null, childRunId: null, startedAt: iso, finishedAt: iso,
});

function api(graph: unknown, opts: { messages?: unknown[]; runDetail?: unknown } = {}) {
  return fakeApi({
    'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read', 'run'], authRequired: true } }),
    'GET /v1/definitions': () => ({ body: { items: [summary], nextCursor: null } }),
    'GET /v1/definitions/*': () => ({ body: { ...summary, graph } }),
    'GET /v1/conversations': () => ({ body: { items: [], nextCursor: null } }),
    'GET /v1/conversations/*/messages': () => ({ body: { items: opts.messages ?? [], nextCursor: null } }),
    'GET /v1/conversations/*/runs': () => ({ body: { items: opts.runDetail ? [run('Completed')] : [], nextCursor: null } }),
    ...(opts.runDetail ? { 'GET /v1/runs/*': () => ({ body: opts.runDetail }) } : {}),
  });
}

const open = (a: ReturnType<typeof api>) => renderApp(`/console/chat?definitionId=${DEF}&conversationId=conv-9`, a);

describe('chat attachments', () => {
  it('hides the file control when the Chat graph does not accept attachments', async () => {
    const a = api(graphOf({ acceptsAttachments: false }));
    open(a);
    await screen.findByLabelText('Message', {}, { timeout: 5000 });
    await waitFor(() => expect(a.calls.some((c) => c.startsWith(`GET /v1/definitions/${DEF}`))).toBe(true));
    // let the definition's answer render before looking for the control
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByLabelText('Attach files')).toBeNull();
  });

  it('uploads each chosen file at once, shows it as a chip, and the send carries it, then clears the chips', async () => {
    const a = api(graphOf({ acceptsAttachments: true }));
    let n = 0;
    a.on('POST /v1/files', () => {
      n += 1;
      return { status: 201, body: { fileId: `f-${n}`, name: n === 1 ? 'notes.txt' : 'photo.png', bytes: n === 1 ? 12 : 2048, sha256: 'ab', contentType: n === 1 ? 'text/plain' : 'image/png', kind: n === 1 ? 'text' : 'image' } };
    });
    a.on('POST /v1/conversations/*/messages', () => ({ status: 202, body: { runId: RUN, messageId: 'm1', action: 'started' } }));
    open(a);
    const picker = await screen.findByLabelText('Attach files', {}, { timeout: 5000 });
    expect(picker.getAttribute('type')).toBe('file');
    expect(picker.hasAttribute('multiple')).toBe(true);
    await userEvent.upload(picker, [new File(['hello world\n'], 'notes.txt', { type: 'text/plain' }), new File([new Uint8Array(2048)], 'photo.png', { type: 'image/png' })]);
    const chips = await screen.findByRole('list', { name: 'Attachments to send' });
    await waitFor(() => expect(within(chips).getByText('photo.png')).toBeTruthy());
    expect(chips.textContent).toContain('notes.txt');
    expect(chips.textContent).toContain('text · 12 B');
    expect(chips.textContent).toContain('image · 2.0 KB');
    expect(a.sent.filter((s) => s.route === 'POST /v1/files')).toHaveLength(2);
    // a removed chip is not sent
    await userEvent.click(screen.getByRole('button', { name: 'Remove photo.png' }));
    await userEvent.type(screen.getByLabelText('Message'), 'read this');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    await waitFor(() => expect(a.sent.some((s) => s.route === 'POST /v1/conversations/conv-9/messages')).toBe(true));
    expect(a.sent.find((s) => s.route === 'POST /v1/conversations/conv-9/messages')!.body).toMatchObject({
      definitionId: DEF,
      text: 'read this',
      attachments: [{ fileId: 'f-1', name: 'notes.txt', kind: 'text', bytes: 12 }],
    });
    await waitFor(() => expect(screen.queryByRole('list', { name: 'Attachments to send' })).toBeNull());
  });

  it('shows a refused upload with its code and sends nothing for it', async () => {
    const a = api(graphOf({ acceptsAttachments: true }));
    a.on('POST /v1/files', () => refuse(413, 'PayloadTooLarge', 'the upload exceeds MAX_UPLOAD_BYTES'));
    a.on('POST /v1/conversations/*/messages', () => ({ status: 202, body: { runId: RUN, messageId: 'm1', action: 'started' } }));
    open(a);
    await userEvent.upload(await screen.findByLabelText('Attach files', {}, { timeout: 5000 }), new File(['x'.repeat(100)], 'big.log', { type: 'text/plain' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Not attached: big.log');
    expect(alert.textContent).toContain('PayloadTooLarge');
    await userEvent.type(screen.getByLabelText('Message'), 'without it');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    await waitFor(() => expect(a.sent.some((s) => s.route === 'POST /v1/conversations/conv-9/messages')).toBe(true));
    expect(a.sent.find((s) => s.route === 'POST /v1/conversations/conv-9/messages')!.body).not.toHaveProperty('attachments');
  });

  it('lists a user message’s files and, in the run card, which ones the model received and which were skipped', async () => {
    const files = [
      { fileId: 'f-1', name: 'a.txt', kind: 'text', bytes: 10 },
      { fileId: 'f-2', name: 'b.png', kind: 'image', bytes: 3000 },
      { fileId: 'f-3', name: 'empty.txt', kind: 'text', bytes: 0 },
    ];
    const graph = graphOf({ acceptsAttachments: true }, [
      { key: 'ask', kind: 'LlmCall', config: { includeAttachments: true } },
      { key: 'plain', kind: 'LlmCall', config: {} },
    ]);
    const a = api(graph, {
      messages: [{ id: 'm1', role: 'user', text: 'look', attachments: files, runId: RUN, nodeKey: null, createdAt: iso }],
      runDetail: { run: run('Completed'), nodeRuns: [nodeRun('ask', 'LlmCall', 'Succeeded'), nodeRun('plain', 'LlmCall', 'Succeeded')], output: null, graph },
    });
    a.on('GET /v1/runs/*/nodes/ask', () => ({
      body: {
        ...nodeRun('ask', 'LlmCall', 'Succeeded'),
        input: { run: { input: { text: 'look', attachments: files } }, upstream: {}, input: null },
        output: { status: 'succeeded', attempt: 1, branch: null, output: { text: 'seen', attachmentsSkipped: ['empty.txt'] } },
        error: null,
        steering: [],
        notBefore: null,
      },
    }));
    open(a);
    const bubble = (await screen.findByText('look', {}, { timeout: 5000 })).closest('li')!;
    const listed = within(bubble).getByRole('list', { name: 'Attached files' });
    expect(listed.textContent).toContain('a.txt');
    expect(listed.textContent).toContain('image · 2.9 KB');
    expect(listed.textContent).toContain('empty.txt');
    const card = await screen.findByRole('region', { name: 'Attachments the model received' }, { timeout: 5000 });
    await waitFor(() => expect(card.textContent).toContain('The model received: a.txt, b.png'));
    expect(card.textContent).toContain('Skipped: empty.txt');
    // only the node that was asked to read the files is looked up
    expect(a.calls.some((c) => c.includes('/nodes/plain'))).toBe(false);
  });
});
