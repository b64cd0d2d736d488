// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeApi } from '../test/fake-api';
import { renderInSession } from '../test/render';
import { StateTab } from './StateTab';
import { graphKeepsState, stateDiff, stateUpdates } from './state-history';

const RUN = '11111111-2222-4333-8444-555555555555';
const AT = '2026-01-01T00:00:00Z';
const ev = (seq: number, kind: string, nodeKey: string | null, detail: unknown = {}) => ({ seq, kind, nodeKey, at: AT, detail });

/** Start writes topic (#3), s1 and s2 append findings (#6, #9). */
const EVENTS = [
  ev(1, 'run.started', null),
  ev(2, 'node.succeeded', 'start'),
  ev(3, 'state.updated', 'start', { keys: ['topic'], bySeq: 2 }),
  ev(5, 'node.succeeded', 's1'),
  ev(6, 'state.updated', 's1', { keys: ['findings'], bySeq: 5 }),
  ev(8, 'node.succeeded', 's2'),
  ev(9, 'state.updated', 's2', { keys: ['findings'], bySeq: 8 }),
];
const STATES: Array<[number, Record<string, unknown>]> = [
  [0, { findings: [] }],
  [3, { findings: [], topic: 'owls' }],
  [6, { findings: ['a'], topic: 'owls' }],
  [9, { findings: ['a', 'b'], topic: 'owls' }],
];
const stateAt = (seq: number) => [...STATES].reverse().find(([s]) => s <= seq)![1];

function api() {
  return fakeApi({
    [`GET /v1/runs/${RUN}/events`]: ({ url }) => ({ body: { events: Number(url.searchParams.get('afterSeq') ?? 0) > 0 ? [] : EVENTS, truncated: false } }),
    [`GET /v1/runs/${RUN}/state`]: ({ url }) => {
      const at = url.searchParams.get('atSeq');
      const seq = at === null ? 9 : Number(at);
      return { body: { state: stateAt(seq), seq } };
    },
  });
}

describe('the State tab', () => {
  it('shows the state now and, for a chosen change, the state as of it and each key before → after', async () => {
    const picks: Array<number | undefined> = [];
    const graph = { state: { reducers: { findings: 'append' } }, nodes: [], edges: [] };
    const fake = api();
    const view = renderInSession(<StateTab runId={RUN} graph={graph} pollMs={false} seq={undefined} onPick={(s) => picks.push(s)} />, fake);
    expect(await screen.findByText('as of #9')).toBeTruthy();
    const buttons = await screen.findAllByRole('button', { pressed: false });
    expect(buttons.map((b) => b.textContent)).toEqual(['#3 start topic', '#6 s1 findings', '#9 s2 findings']);
    await userEvent.click(buttons[1]!);
    expect(picks).toEqual([6]);
    view.unmount();
    renderInSession(<StateTab runId={RUN} graph={graph} pollMs={false} seq={6} onPick={() => undefined} />, fake);
    const table = await screen.findByRole('table', { name: 'What s1 changed' });
    expect(table.querySelector('tr[data-state-key="findings"]')?.textContent).toContain('findings changed[]["a"]');
    expect(table.querySelectorAll('tbody tr')).toHaveLength(1);
    expect(fake.calls).toContain(`GET /v1/runs/${RUN}/state?atSeq=6`);
    expect(fake.calls).toContain(`GET /v1/runs/${RUN}/state?atSeq=5`);
  });

  it('says plainly when the graph keeps no state, and reads nothing', () => {
    const fake = api();
    renderInSession(<StateTab runId={RUN} graph={{ nodes: [{ key: 'start', kind: 'Start' }], edges: [] }} pollMs={false} seq={undefined} onPick={() => undefined} />, fake);
    expect(screen.getByText('This graph keeps no run state')).toBeTruthy();
    expect(fake.calls).toEqual([]);
  });
});

describe('state history', () => {
  it('keeps state for a state member, a node write or a state condition, and not otherwise', () => {
    expect(graphKeepsState({ state: {}, nodes: [], edges: [] })).toBe(true);
    expect(graphKeepsState({ nodes: [{ key: 'a', kind: 'Tool', writes: { x: 'output.result' } }], edges: [] })).toBe(true);
    expect(graphKeepsState({ nodes: [], edges: [{ key: 'e', from: 'a', to: 'b', condition: { path: 'state.x', op: 'exists' } }] })).toBe(true);
    expect(graphKeepsState({ nodes: [{ key: 'a', kind: 'Tool' }], edges: [{ key: 'e', from: 'a', to: 'b' }] })).toBe(false);
  });

  it('lists only state.updated events, oldest first, with their keys', () => {
    expect(stateUpdates([EVENTS[6]!, EVENTS[0]!, EVENTS[2]!])).toEqual([
      { seq: 3, nodeKey: 'start', at: AT, keys: ['topic'] },
      { seq: 9, nodeKey: 's2', at: AT, keys: ['findings'] },
    ]);
  });

  it('names each key added, changed or removed, and leaves equal values out', () => {
    expect(stateDiff({ a: 1, b: [1], c: { x: 1 } }, { b: [1, 2], c: { x: 1 }, d: 'new' })).toEqual([
      { key: 'a', change: 'removed', before: 1, after: undefined },
      { key: 'b', change: 'changed', before: [1], after: [1, 2] },
      { key: 'd', change: 'added', before: undefined, after: 'new' },
    ]);
  });
});
