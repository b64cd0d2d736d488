// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { ToolCallDecision } from './ToolCallDecision';

const RUN = '11111111-2222-4333-8444-555555555555';
const CALL = { step: 6, tool: 'mcp:pay/refund', arguments: { orderId: 'o-42', amount: 10 }, inputSchema: { type: 'object', required: ['orderId'] } };
const DECIDE = `POST /v1/runs/${RUN}/nodes/agent/decide`;

describe('a tool call awaiting approval', () => {
  it('approves the call as asked: no arguments sent, and the buttons stay off once accepted', async () => {
    const api = fakeApi({ [DECIDE]: () => ({ status: 202, body: { accepted: true } }) });
    renderInSession(<ToolCallDecision runId={RUN} nodeKey="agent" call={CALL} />, api);
    expect(screen.getByText('mcp:pay/refund')).toBeTruthy();
    // nothing edited: the edited approval would only repeat the ask
    expect((screen.getByRole('button', { name: 'Approve with edited arguments' }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
    await screen.findByText(/Approved: the agent goes on/);
    const sent = api.sent.filter((s) => s.route === DECIDE);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ decision: 'Approve' });
    expect((sent[0]!.body as Record<string, unknown>).payload).toBeUndefined();
    expect(sent[0]!.headers.get('idempotency-key')).toBe((sent[0]!.body as { operationId: string }).operationId);
    for (const name of ['Approve', 'Reject']) expect((screen.getByRole('button', { name }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('rejects with the comment the model is handed', async () => {
    const api = fakeApi({ [DECIDE]: () => ({ status: 202, body: { accepted: true } }) });
    renderInSession(<ToolCallDecision runId={RUN} nodeKey="agent" call={CALL} />, api);
    await userEvent.type(screen.getByLabelText(/Comment/), 'not this order');
    await userEvent.click(screen.getByRole('button', { name: 'Reject' }));
    await screen.findByText(/Rejected: the agent goes on/);
    expect(api.sent.find((s) => s.route === DECIDE)!.body).toMatchObject({ decision: 'Reject', comment: 'not this order' });
  });

  it('shows a key without the run scope the call and no button', () => {
    renderInSession(<ToolCallDecision runId={RUN} nodeKey="agent" call={CALL} />, fakeApi(), ['read']);
    expect(screen.getByText('mcp:pay/refund')).toBeTruthy();
    expect(screen.getByText('This key cannot decide (it lacks the run scope).')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /Approve|Reject/ })).toBeNull();
  });
});
