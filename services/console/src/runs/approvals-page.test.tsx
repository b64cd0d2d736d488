// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import { fakeApi } from '../test/fake-api';
import { renderApp } from '../test/render';

const DEF = 'dddddddd-0000-4000-8000-000000000001';
const id = (n: number) => `aaaaaaaa-0000-4000-8000-00000000000${n}`;
const iso = '2026-01-01T00:00:00.000Z';
const run = (n: number) => ({
  id: id(n), definitionId: DEF, status: 'WaitingForApproval', failureClass: 'None', reason: null, paused: false, requestId: null, parentRunId: null,
  conversationId: null, createdAt: iso, startedAt: iso, finishedAt: null, graphHash: 'h', lastSeq: 0, definitionVersion: 3,
});
const gate = (nodeKey: string, since: string, details: Record<string, unknown>) => ({ nodeKey, status: 'WaitingForApproval', kind: 'gate', since, details });

describe('the approvals inbox', () => {
  it('lists the gates of the runs waiting for a person, the longest waiting first, with quorum progress; a run parked on a Wait is left out', async () => {
    const blockers: Record<string, unknown[]> = {
      [id(1)]: [gate('refund', '2026-01-01T00:05:00.000Z', { decisionKind: 'ToolCall', tool: 'mcp:pay/refund' })],
      [id(2)]: [gate('sign-off', '2026-01-01T00:01:00.000Z', { decisionKind: 'Approve', quorums: [{ name: 'finance', approvals: 1, min: 2 }, { name: 'legal', approvals: 0, min: 1 }] })],
      [id(3)]: [{ nodeKey: 'nap', status: 'Running', kind: 'timer', since: iso, details: { until: '2026-01-01T01:00:00.000Z' } }],
    };
    const api = fakeApi({
      'GET /v1/whoami': () => ({ body: { tenant: 'acme', scopes: ['read'], authRequired: false } }),
      'GET /v1/definitions': () => ({ body: { items: [{ id: DEF, name: 'payments', description: '', kind: 'Standard', version: 3, nodeCount: 4, graphHash: 'h', createdAt: iso, updatedAt: iso }], nextCursor: null } }),
      'GET /v1/runs': () => ({ body: { items: [run(1), run(2), run(3)], nextCursor: null } }),
      'GET /v1/runs/*/blockers': ({ url }) => {
        const runId = url.pathname.split('/')[3]!;
        return { body: { runId, status: 'WaitingForApproval', at: iso, blockers: blockers[runId] ?? [] } };
      },
    });
    renderApp('/console/approvals', api);
    await screen.findByRole('heading', { name: 'Approvals', level: 1 });
    await waitFor(() => expect(document.querySelectorAll('tr[data-approval-run]').length).toBe(2));
    const rows = [...document.querySelectorAll('tr[data-approval-run]')];
    expect(rows.map((r) => r.getAttribute('data-approval-node'))).toEqual(['sign-off', 'refund']);
    expect(rows[0]!.textContent).toContain('finance: 1 of 2');
    expect(rows[0]!.textContent).toContain('legal: 0 of 1');
    expect(rows[1]!.textContent).toContain('a tool call approval');
    expect(rows[1]!.textContent).toContain('mcp:pay/refund');
    await waitFor(() => expect(rows[1]!.textContent).toContain('payments'));
    const asked = api.calls.filter((c) => c.startsWith('GET /v1/runs?')).map((c) => new URLSearchParams(c.slice(c.indexOf('?') + 1)).get('status'));
    expect(asked[0]).toBe('WaitingForApproval');
    expect(screen.getByRole('link', { name: `Decide refund of run ${id(1).slice(0, 8)}` }).getAttribute('href')).toContain(`runId=${id(1)}`);
  });

  it("shows a policy gate's quorum members, who decided through which path, and keeps only what waits for me", async () => {
    const approval = (viewer: Record<string, unknown>) => ({
      status: 'pending',
      quorums: [{ name: 'finance', min: 2, principals: ['key:me', 'key:ann', 'key:bob'], approvals: 1, rejections: 0, met: false }],
      decisions: [{ principal: 'key:ann', decision: 'Approve', path: 'link', comment: 'fine by me', at: '2026-01-01T00:02:00.000Z' }],
      nextAt: null,
      viewer: { principal: 'key:me', quorums: ['finance'], ...viewer },
    });
    const blockers: Record<string, unknown[]> = {
      [id(1)]: [gate('mine', '2026-01-01T00:01:00.000Z', { decisionKind: 'Approve', approval: approval({ canDecide: true, rule: null, message: null }) })],
      [id(2)]: [gate('forbidden', '2026-01-01T00:02:00.000Z', { decisionKind: 'Approve', approval: approval({ canDecide: false, rule: 'initiator', message: 'the principal that started this run may not decide its approval (forbid: initiator)' }) })],
      // no policy: decided by any key with the run scope, which this key lacks
      [id(3)]: [gate('plain', '2026-01-01T00:03:00.000Z', { decisionKind: 'Approve' })],
    };
    const api = fakeApi({
      'GET /v1/whoami': () => ({ body: { tenant: 'acme', principal: 'key:me', scopes: ['read'], authRequired: false } }),
      'GET /v1/definitions': () => ({ body: { items: [], nextCursor: null } }),
      'GET /v1/runs': () => ({ body: { items: [run(1), run(2), run(3)], nextCursor: null } }),
      'GET /v1/runs/*/blockers': ({ url }) => {
        const runId = url.pathname.split('/')[3]!;
        return { body: { runId, status: 'WaitingForApproval', at: iso, blockers: blockers[runId] ?? [] } };
      },
    });
    renderApp('/console/approvals', api);
    await waitFor(() => expect(document.querySelectorAll('tr[data-approval-run]').length).toBe(3));
    const row = (node: string) => document.querySelector(`tr[data-approval-node="${node}"]`)!;
    expect(row('mine').textContent).toContain('finance: 1 of 2');
    expect(row('mine').textContent).toContain('key:me, key:ann, key:bob');
    expect(row('mine').textContent).toContain('key:ann approved through a signed link');
    expect(row('mine').textContent).toContain('fine by me');
    expect(row('mine').textContent).toContain('You (key:me) may decide, counting toward finance.');
    expect(row('forbidden').textContent).toContain('You cannot decide (initiator)');
    expect([...document.querySelectorAll('tr[data-approval-run]')].map((r) => r.getAttribute('data-waiting-for-me'))).toEqual(['true', 'false', 'false']);
    screen.getByRole('button', { name: 'Waiting for me (1)' }).click();
    await waitFor(() => expect([...document.querySelectorAll('tr[data-approval-run]')].map((r) => r.getAttribute('data-approval-node'))).toEqual(['mine']));
    expect(screen.getByRole('button', { name: 'Waiting for me (1)' }).getAttribute('aria-pressed')).toBe('true');
  });
});
