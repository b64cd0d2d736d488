import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../model';
import { type Doc, errorsOf, parse } from '../parse/fixtures/builders';

/** start → a, b (side by side) → done, with `state` and each node's writes given. */
function fanOut(state: JsonObject | undefined, writes: Record<string, JsonObject | undefined>): Doc {
  const n = (key: string, extra: JsonObject): JsonObject => (writes[key] ? { ...extra, key, writes: writes[key] } : { ...extra, key });
  return {
    ...(state ? { state } : {}),
    nodes: [
      n('start', { kind: 'Start' }),
      n('a', { kind: 'LlmCall', config: { prompt: 'one' } }),
      n('b', { kind: 'LlmCall', config: { prompt: 'two' } }),
      n('c', { kind: 'LlmCall', config: { prompt: 'three' } }),
      { key: 'done', kind: 'End', config: { outcome: 'completed' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'a' },
      { key: 'e2', from: 'start', to: 'b' },
      { key: 'e3', from: 'a', to: 'c' },
      { key: 'e4', from: 'b', to: 'c' },
      { key: 'e5', from: 'c', to: 'done' },
    ],
  };
}

describe('parsing run state', () => {
  it('keeps no state when the graph declares none, and parses a declared one with its defaults', () => {
    const none = parse(fanOut(undefined, {}));
    expect(none.ok && none.graph.state).toBe(undefined);
    const r = parse(fanOut({ reducers: { findings: 'append' } }, { start: { topic: 'output.input.topic' }, a: { findings: 'output.text' } }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.graph.state).toEqual({ schema: null, reducers: { findings: 'append' }, initial: {} });
    expect(r.graph.nodes.find((n) => n.key === 'a')!.writes).toEqual({ findings: 'output.text' });
    expect(parse(JSON.parse(JSON.stringify(r.graph)))).toEqual(r);
  });

  it('keeps state (every key overwriting) when only a node writes or a condition reads state', () => {
    const r = parse(fanOut(undefined, { a: { note: 'output.text' } }));
    expect(r.ok && r.graph.state).toEqual({ schema: null, reducers: {}, initial: {} });
    const d = fanOut(undefined, {});
    d.edges[2]!.condition = { path: 'state.ready', op: 'Eq', value: true };
    const c = parse(d);
    expect(c.ok && c.graph.state).toEqual({ schema: null, reducers: {}, initial: {} });
    expect(c.warnings).toEqual([]);
  });

  it('refuses an unknown reducer, a bad state key, a bad writes path and an unknown state member, keyed', () => {
    const errors = errorsOf(fanOut({ reducers: { findings: 'concat', 'a.b': 'sum' }, extra: 1 }, { a: { findings: 'output..x' } }));
    expect(errors).toEqual([
      { key: null, message: "'state' has an unknown member 'extra'" },
      { key: null, message: expect.stringContaining('state.reducers.findings must be one of overwrite, append, sum, merge, rejectConflict') },
      { key: null, message: expect.stringContaining('state key "a.b" must be 1–64 characters') },
      { key: 'a', message: expect.stringContaining('writes.findings must be a dot path') },
    ]);
  });

  it('type-checks reducers against the schema and initial against both at save', () => {
    const schema = { type: 'object', properties: { findings: { type: 'string' }, cost: { type: 'integer' }, meta: { type: 'object' } } };
    const errors = errorsOf(fanOut({ schema, reducers: { findings: 'append', cost: 'sum', meta: 'merge' }, initial: { cost: 'zero' } }, {}));
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringContaining("state.initial.cost must be a number for the sum reducer"),
      expect.stringContaining('state.reducers.findings is append, which needs an array, but state.schema declares findings as "string"'),
      expect.stringContaining('state.initial does not match state.schema'),
    ]);
  });

  it('refuses two rejectConflict writers that could run side by side, and accepts ordered ones', () => {
    const side = errorsOf(fanOut({ reducers: { verdict: 'rejectConflict' } }, { a: { verdict: 'output.text' }, b: { verdict: 'output.text' } }));
    expect(side).toEqual([{ key: 'b', message: expect.stringContaining("writes rejectConflict state key 'verdict', which 'a' writes too, and neither runs before the other") }]);
    expect(errorsOf(fanOut({ reducers: { verdict: 'rejectConflict' } }, { a: { verdict: 'output.text' }, c: { verdict: 'output.text' } }))).toEqual([]);
    // the same pair under overwrite is fine: last commit wins
    expect(errorsOf(fanOut({ reducers: { verdict: 'overwrite' } }, { a: { verdict: 'output.text' }, b: { verdict: 'output.text' } }))).toEqual([]);
  });
});
