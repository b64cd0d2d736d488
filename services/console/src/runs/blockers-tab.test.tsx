// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi, refuse } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { BlockersTab } from './BlockersTab';

const RUN = '11111111-2222-4333-8444-555555555555';
const NOW = Date.parse('2026-01-01T00:01:00Z');

/** The tab on its own (the run view hands it the node selection). */
describe('the Waiting on tab', () => {
  it('lists what each non-terminal node waits for, since when', async () => {
    const api = fakeApi({
      [`GET /v1/runs/${RUN}/blockers`]: () => ({
        body: {
          runId: RUN, status: 'Running', at: '2026-01-01T00:01:00Z',
          blockers: [
            { nodeKey: 'gate', status: 'WaitingForApproval', kind: 'gate', since: '2026-01-01T00:00:00Z', details: { decisionKind: 'Approve' } },
            { nodeKey: 'after', status: 'Pending', kind: 'upstream', since: null, details: { waitingOn: ['gate'] } },
          ],
        },
      }),
    });
    renderInSession(<BlockersTabInRouter />, api);
    expect(await screen.findByText('Waiting for a person: a decision.')).toBeTruthy();
    expect(screen.getByText('Waiting on upstream: gate.')).toBeTruthy();
    expect(document.querySelectorAll('tr[data-blocker-kind]')).toHaveLength(2);
    await userEvent.click(screen.getByRole('button', { name: 'after' }));
    expect(selected).toEqual(['after']);
  });

  it('says when nothing waits, and shows a refusal as code: message', async () => {
    const done = fakeApi({ [`GET /v1/runs/${RUN}/blockers`]: () => ({ body: { runId: RUN, status: 'Completed', at: '2026-01-01T00:01:00Z', blockers: [] } }) });
    const view = renderInSession(<BlockersTabInRouter />, done);
    expect(await screen.findByText('Nothing waits')).toBeTruthy();
    view.unmount();
    renderInSession(<BlockersTabInRouter />, fakeApi({ [`GET /v1/runs/${RUN}/blockers`]: () => refuse(403, 'Forbidden', 'the key lacks the read scope') }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Forbidden');
    expect(alert.textContent).toContain('the key lacks the read scope');
  });
});

const selected: string[] = [];
function BlockersTabInRouter() {
  return <BlockersTab runId={RUN} pollMs={false} now={NOW} onSelect={(k) => selected.push(k)} />;
}
