import { describe, expect, it } from 'vitest';
import { REDACTED, SEALED, jsonPatch, patchForStorage, redactValue, type PatchOp } from './json-patch';

/** Applies RFC 6902 add/replace/remove ops (what a diff produces) to a copy of `doc`. */
function apply(doc: unknown, ops: PatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const tokens = op.path.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (tokens.length === 0) {
      root = op.op === 'remove' ? undefined : structuredClone(op.value);
      continue;
    }
    const parent = tokens.slice(0, -1).reduce<Record<string, unknown>>((at, t) => at[t] as Record<string, unknown>, root as Record<string, unknown>);
    const last = tokens[tokens.length - 1]!;
    if (op.op === 'remove') delete parent[last];
    else parent[last] = structuredClone(op.value);
  }
  return root;
}

const graph = (n: number, extra: Record<string, unknown> = {}) => ({
  nodes: Array.from({ length: n }, (_, i) => ({ key: `n${i}`, kind: 'Tool', config: { tool: 'echo', args: { i } } })),
  edges: [],
  ...extra,
});

describe('jsonPatch', () => {
  it('is empty for equal documents and turns the old document into the new one', () => {
    expect(jsonPatch(graph(2), graph(2))).toEqual([]);
    const cases: Array<[unknown, unknown]> = [
      [{}, { name: 'a', graph: graph(1) }],
      [graph(2), graph(3)],
      [graph(2, { title: 'x' }), graph(2)],
      [{ a: { 'b/c': 1, 'd~e': 2 } }, { a: { 'b/c': 2 } }],
      [{ a: [1, 2, 3] }, { a: [1, 5, 3] }],
      [{ a: null }, { a: { b: 1 } }],
      [1, 'one'],
    ];
    for (const [a, b] of cases) expect(apply(a, jsonPatch(a, b))).toEqual(b);
  });

  it('names each changed member by its pointer (~0 and ~1 escaped)', () => {
    expect(jsonPatch({ a: { 'b/c': 1, 'd~e': 2 } }, { a: { 'b/c': 2 } })).toEqual([
      { op: 'remove', path: '/a/d~0e' },
      { op: 'replace', path: '/a/b~1c', value: 2 },
    ]);
  });

  it('redacts values under secret-named members and keeps their paths', () => {
    const before = { graph: { nodes: [{ key: 'call', config: { args: { url: 'u', headers: { authorization: 'Bearer old' } } } }] } };
    const after = { graph: { nodes: [{ key: 'call', config: { args: { url: 'u', headers: { authorization: 'Bearer new' }, token: 't' } } }] } };
    const ops = jsonPatch(before, after);
    expect(ops).toEqual([
      { op: 'replace', path: '/graph/nodes/0/config/args/headers/authorization', value: REDACTED },
      { op: 'add', path: '/graph/nodes/0/config/args/token', value: REDACTED },
    ]);
    const added = jsonPatch({}, after);
    expect(JSON.stringify(added)).not.toContain('Bearer new');
    expect(added).toEqual([{ op: 'add', path: '/graph', value: { nodes: [{ key: 'call', config: { args: { url: 'u', headers: REDACTED, token: REDACTED } } }] } }]);
  });

  it('leaves values under ordinary names alone', () => {
    expect(redactValue({ tokenizer: 'x', apiKeyName: 'y', list: [{ password: 'p' }] })).toEqual({ tokenizer: 'x', apiKeyName: 'y', list: [{ password: REDACTED }] });
  });

  it('keeps ops and paths but no values when graphs are sealed at rest (an audit row is never re-sealed)', () => {
    const ops = jsonPatch({ nodes: [{ prompt: 'old' }], x: 1 }, { nodes: [{ prompt: 'new' }] });
    expect(patchForStorage(ops, false)).toEqual(ops);
    const stored = patchForStorage(ops, true);
    expect(stored.map((o) => [o.op, o.path])).toEqual(ops.map((o) => [o.op, o.path]));
    expect(JSON.stringify(stored)).not.toContain('new');
    expect(stored.filter((o) => o.op !== 'remove').every((o) => 'value' in o && o.value === SEALED)).toBe(true);
  });
});
