import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseGraph } from '../parse';
import { BUILTIN_TOOLS } from '../parse/fixtures/canonical-eight';
import { eventNameMatches, judgeEvent, MAX_EVENT_TRIGGERS, parseEventTriggers, type EventTrigger, type TriggerEvent } from './event-triggers';

const ev = (name: string, data: unknown, id = 'e1'): TriggerEvent => ({ id, name, data: data as never, ts: null });
const parsed = (raw: unknown): EventTrigger[] => {
  const r = parseEventTriggers(raw);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.triggers;
};

describe('event name patterns', () => {
  it.each([
    ['order.created', 'order.created', true],
    ['order.created', 'order.created2', false],
    ['order.*', 'order.created', true],
    ['order.*', 'order.', true],
    ['order.*', 'order', false],
    ['order.*', 'orders.created', false],
    ['*', 'anything.at.all', true],
    ['*.failed', 'payment.card.failed', true],
    ['*.failed', 'payment.failed.retry', false],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false],
  ])('%s matches %s: %s', (pattern, name, want) => {
    expect(eventNameMatches(pattern, name)).toBe(want);
  });

  it('agrees with a regular expression for every pattern and name (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', '.', '*');
    fc.assert(
      fc.property(fc.array(alphabet, { minLength: 1, maxLength: 8 }), fc.array(fc.constantFrom('a', 'b', '.'), { maxLength: 10 }), (p, n) => {
        const pattern = p.join('');
        const name = n.join('');
        const re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/\./g, '\\.')).join('.*')}$`, 's');
        expect(eventNameMatches(pattern, name)).toBe(re.test(name));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseEventTriggers', () => {
  it('reads event, filter and input (input defaults to data)', () => {
    expect(parsed([{ event: 'order.*' }, { event: 'x', filter: { path: 'data.n', op: 'Gt', value: 1 }, input: 'data.order' }])).toEqual([
      { event: 'order.*', filter: null, input: 'data' },
      { event: 'x', filter: { path: 'data.n', op: 'Gt', value: 1 }, input: 'data.order' },
    ]);
  });

  it('refuses what it cannot run, naming the trigger', () => {
    const r = parseEventTriggers([{ event: 'bad name' }, { event: 'ok', filter: { path: 'data.n', op: 'Near', value: 1 } }, { event: 'ok', input: 'a..b' }, { event: 'ok', extra: 1 }, 'x']);
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    expect(errors.some((e) => e.startsWith('triggers[0].event'))).toBe(true);
    expect(errors.some((e) => e.startsWith('triggers[1].filter'))).toBe(true);
    expect(errors.some((e) => e.startsWith('triggers[2].input'))).toBe(true);
    expect(errors).toContain("triggers[3] has an unknown member 'extra'");
    expect(errors.some((e) => e.startsWith('triggers[4]'))).toBe(true);
    expect(parseEventTriggers({}).ok).toBe(false);
    expect(parseEventTriggers(Array.from({ length: MAX_EVENT_TRIGGERS + 1 }, () => ({ event: 'a' }))).ok).toBe(false);
  });

  it('is a graph member: kept on the parsed graph, refused with the graph when wrong', () => {
    const nodes = [
      { key: 'start', kind: 'Start' },
      { key: 'end', kind: 'End', config: { outcome: 'ok' } },
    ];
    const edges = [{ key: 'e', from: 'start', to: 'end' }];
    const ok = parseGraph({ nodes, edges, triggers: [{ event: 'order.*' }] }, { maxNodes: 200, tools: BUILTIN_TOOLS });
    expect(ok.ok && ok.graph.triggers).toEqual([{ event: 'order.*', filter: null, input: 'data' }]);
    const bad = parseGraph({ nodes, edges, triggers: [{ event: '' }] }, { maxNodes: 200, tools: BUILTIN_TOOLS });
    expect(bad.ok).toBe(false);
  });
});

describe('judgeEvent', () => {
  const triggers = parsed([{ event: 'order.*', filter: { path: 'data.total', op: 'Gte', value: 100 }, input: 'data.order' }]);

  it('matches: the run input is read at the trigger input path', () => {
    expect(judgeEvent(triggers, ev('order.paid', { total: 150, order: { id: 7 } }))).toEqual({ outcome: 'matched', trigger: 0, input: { id: 7 } });
  });

  it('does not match a false filter or another name, and says why', () => {
    expect(judgeEvent(triggers, ev('order.paid', { total: 5 }))).toEqual({ outcome: 'notMatched', reason: 'triggers[0].filter: data.total Gte 100 is false' });
    expect(judgeEvent(triggers, ev('order.paid', {}))).toEqual({ outcome: 'notMatched', reason: 'triggers[0].filter: data.total is absent' });
    expect(judgeEvent(triggers, ev('invoice.paid', { total: 500 }))).toEqual({ outcome: 'notMatched', reason: "triggers[0] listens for 'order.*'" });
  });

  it('reports a filter that cannot be judged on the data as an error, not a silent miss', () => {
    const v = judgeEvent(triggers, ev('order.paid', { total: '150' }));
    expect(v).toMatchObject({ outcome: 'filterError', trigger: 0 });
    expect(v.outcome === 'filterError' && v.reason).toContain('data.total is a string');
    expect(judgeEvent(triggers, ev('order.paid', { total: { n: 1 } }))).toMatchObject({ outcome: 'filterError' });
    const flags = parsed([{ event: 'f', filter: { path: 'data.on', op: 'Eq', value: true } }]);
    expect(judgeEvent(flags, ev('f', { on: 1 }))).toMatchObject({ outcome: 'filterError' });
    expect(judgeEvent(flags, ev('f', { on: true })).outcome).toBe('matched');
    // an ordering of booleans is refused when the graph is saved, not judged per event
    expect(parseEventTriggers([{ event: 'f', filter: { path: 'data.on', op: 'Gt', value: true } }]).ok).toBe(false);
  });

  it('lets a later trigger match past an earlier filter error; the whole event is the default input', () => {
    const two = parsed([{ event: 'a', filter: { path: 'data.n', op: 'Gt', value: 1 } }, { event: 'a' }]);
    expect(judgeEvent(two, ev('a', { n: 'x' }))).toEqual({ outcome: 'matched', trigger: 1, input: { n: 'x' } });
    expect(judgeEvent(parsed([{ event: 'a', input: 'data.missing' }]), ev('a', {}))).toEqual({ outcome: 'matched', trigger: 0, input: null });
  });

  it('filters may read the name, id and ts of the event', () => {
    const byId = parsed([{ event: '*', filter: { path: 'id', op: 'Eq', value: 'e42' } }]);
    expect(judgeEvent(byId, ev('x', {}, 'e42')).outcome).toBe('matched');
    expect(judgeEvent(byId, ev('x', {}, 'e43')).outcome).toBe('notMatched');
  });
});
