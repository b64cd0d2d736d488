// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { SignalForm } from './SignalForm';

const RUN = '11111111-2222-4333-8444-555555555555';
const GRAPH = { signals: { review: { schema: { type: 'object' } }, cancel: {} }, nodes: [], edges: [] };

describe('the signal form', () => {
  it('sends the channel, the JSON payload and a requestId, and says it was sent', async () => {
    const api = fakeApi({ [`POST /v1/runs/${RUN}/signals`]: () => ({ status: 202, body: { accepted: true, signalId: 's1', duplicate: false } }) });
    renderInSession(<SignalForm runId={RUN} graph={GRAPH} />, api);
    expect((screen.getByLabelText('Channel') as HTMLInputElement).value).toBe('review');
    expect(screen.getByText('This graph declares: review, cancel.')).toBeTruthy();
    const payload = screen.getByLabelText('Payload (JSON)');
    await userEvent.clear(payload);
    await userEvent.type(payload, '{{"approved": true}');
    await userEvent.click(screen.getByRole('button', { name: 'Send signal' }));
    await screen.findByText(/Signal sent on/);
    const sent = api.sent.find((s) => s.route === `POST /v1/runs/${RUN}/signals`)!;
    expect(sent.body).toMatchObject({ channel: 'review', payload: { approved: true } });
    expect(typeof (sent.body as { requestId?: unknown }).requestId).toBe('string');
  });

  it('shows a 409 for a run that has ended as the API said it, and sends nothing while the payload is not JSON', async () => {
    const api = fakeApi({ [`POST /v1/runs/${RUN}/signals`]: () => refuse(409, 'RunStateConflict', 'the run has ended (Completed)') });
    renderInSession(<SignalForm runId={RUN} graph={GRAPH} />, api);
    const payload = screen.getByLabelText('Payload (JSON)');
    await userEvent.clear(payload);
    await userEvent.type(payload, '{{"approved": ');
    expect((screen.getByRole('button', { name: 'Send signal' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByText(/Not JSON/)).toBeTruthy();
    await userEvent.type(payload, 'true}');
    await userEvent.click(screen.getByRole('button', { name: 'Send signal' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('RunStateConflict');
    expect(alert.textContent).toContain('the run has ended (Completed)');
    expect(screen.queryByText(/Signal sent on/)).toBeNull();
  });

  it('is disabled for a key without the run scope, and says why', () => {
    renderInSession(<SignalForm runId={RUN} graph={GRAPH} />, fakeApi(), ['read']);
    expect((screen.getByRole('button', { name: 'Send signal' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByText('This key cannot send signals (it lacks the run scope).')).toBeTruthy();
  });
});
