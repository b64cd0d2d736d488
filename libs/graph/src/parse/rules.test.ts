import { describe, expect, it } from 'vitest';
import { JsonNumber, parseJsonExact, stringifyJsonExact } from '../conditions';
import { OPTS, around, baseline, edge, errorsOf, node, only, parse, router, valid } from './fixtures/builders';
import type { Doc } from './fixtures/builders';
import { canonicalEight } from './fixtures/canonical-eight';

describe('keys', () => {
  it('accepts the baseline', () => valid(baseline()));

  it('refuses a node key outside [A-Za-z0-9_-]{1,64}', () => {
    const d = baseline();
    node(d, 'work').key = 'wo rk';
    edge(d, 'e1').to = 'wo rk';
    edge(d, 'e2').from = 'wo rk';
    only(d, 'wo rk', /must be 1–64 characters/);
  });

  it('refuses an edge key of 65 characters', () => {
    const d = baseline();
    edge(d, 'e2').key = 'x'.repeat(65);
    only(d, 'x'.repeat(65), /must be 1–64 characters/);
  });

  it('refuses a node key used twice', () => {
    const d = baseline();
    d.nodes.push({ key: 'work', kind: 'Parallel' });
    only(d, 'work', /declared more than once/);
  });

  it('shares one namespace between nodes and edges', () => {
    const d = baseline();
    edge(d, 'e2').key = 'work';
    only(d, 'work', /declared more than once \(already used by a node\)/);
  });

  it('refuses an edge that references an undeclared node, keyed to the edge', () => {
    const d = baseline();
    d.edges.push({ key: 'e3', from: 'work', to: 'ghost' });
    only(d, 'e3', /references undeclared node 'ghost'/);
  });

  it('refuses a node kind outside the closed, case-sensitive list', () => {
    const d = baseline();
    node(d, 'work').kind = 'llmcall';
    only(d, 'work', /node kind "llmcall" is not one of the node kinds/);
  });
});

describe('out-edges and in-edges', () => {
  it('refuses a non-End node without an out-edge', () => {
    const d = baseline();
    d.nodes.push({ key: 'side', kind: 'Tool', config: { toolName: 'echo' } });
    d.edges.push({ key: 'e3', from: 'start', to: 'side' });
    only(d, 'side', /Tool node 'side' has no out-edge/);
  });

  it('refuses an End with an out-edge', () => {
    const d = baseline();
    d.nodes.push({ key: 'done2', kind: 'End', config: { outcome: 'x' } });
    d.edges.push({ key: 'e3', from: 'done', to: 'done2' });
    only(d, 'done', /End node 'done' has an out-edge \('e3'\)/);
  });

  it('refuses joinPolicy Any with one inbound edge', () => {
    const d = baseline();
    node(d, 'work').joinPolicy = 'Any';
    only(d, 'work', /"Any" needs at least two inbound edges; 'work' has 1/);
  });

  it('accepts joinPolicy Any with two inbound edges', () => {
    valid(router({ kind: 'Parallel' }, {}, {}));
  });

  it('refuses a quorum above the inbound edge count', () => {
    const d = router({ kind: 'Parallel' }, {}, {});
    node(d, 'done').joinPolicy = { quorum: 3 };
    only(d, 'done', /quorum 3 exceeds the 2 inbound edge/);
    node(d, 'done').joinPolicy = { quorum: 2 };
    valid(d);
  });

  it('refuses a quorum below two', () => {
    const d = router({ kind: 'Parallel' }, {}, {});
    node(d, 'done').joinPolicy = { quorum: 1 };
    only(d, 'done', /quorum must be an integer ≥ 2/);
  });
});

describe('Condition nodes', () => {
  const cond = { kind: 'Condition', config: { path: 'output.x' } };

  it('inherit config.path into out-edge conditions', () => {
    const r = parse(router(cond, { condition: { op: 'Eq', value: 1 } }, { condition: { op: 'ne', value: 1 } }));
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.graph.edges[1]!.condition).toEqual({ path: 'output.x', op: 'Eq', value: 1 });
      expect(r.graph.edges[2]!.condition).toEqual({ path: 'output.x', op: 'Ne', value: 1 });
    }
  });

  it('refuse fewer than two out-edges', () => {
    only(around(cond), 'work', /needs at least two out-edges; it has 1/);
  });

  it('refuse more than one unconditional out-edge', () => {
    only(router(cond, {}, {}), 'r', /2 unconditional out-edges/);
  });

  it('do not count a default edge as unconditional', () => {
    valid(router(cond, { condition: { op: 'Eq', value: 1 } }, { default: true }, [{ key: 'rd', from: 'r', to: 'done' }]));
  });
});

describe('edges', () => {
  it('refuse a second unconditional edge over one pair, keyed to the second', () => {
    const d = baseline();
    d.edges.push({ key: 'e3', from: 'work', to: 'done' });
    only(d, 'e3', /second unconditional edge from 'work' to 'done'/);
  });

  it('allow several conditional edges over one pair', () => {
    const d = baseline();
    d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { path: 'output.text', op: 'Exists' } });
    valid(d);
  });

  it('refuse a second default edge on one source, keyed to itself', () => {
    const d = router({ kind: 'Parallel' }, { default: true }, { default: true });
    only(d, 'rb', /second default edge on 'r' \(the first is 'ra'\)/);
  });

  it('refuse a default edge that carries a condition', () => {
    only(router({ kind: 'Parallel' }, { default: true, condition: { path: 'output.x', op: 'Exists' } }, {}), 'ra', /default edge carries no condition/);
  });

  it('refuse a condition whose path resolves from neither the edge nor a Condition source, keyed to the edge', () => {
    only(router({ kind: 'Parallel' }, { condition: { op: 'Eq', value: 1 } }, {}), 'ra', /no path/);
  });

  it.each([
    ['output.*', /wildcard/],
    ['output.items[0]', /indexing/],
    ['output..x', /empty segment/],
    ['', /must not be empty/],
    [7, /must be a dot path string/],
  ])('refuse the condition path %j', (path, re) => {
    only(router({ kind: 'Parallel' }, { condition: { path, op: 'Eq', value: 1 } }, {}), 'ra', re);
  });

  it('normalise case-insensitive operator names to the canonical spelling', () => {
    const r = parse(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'gTe', value: 2 } }, { condition: { path: 'output.x', op: 'NOTEXISTS' } }));
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.graph.edges[1]!.condition!.op).toBe('Gte');
      expect(r.graph.edges[2]!.condition).toEqual({ path: 'output.x', op: 'NotExists', value: null });
    }
  });

  it.each([['1'], [3], ['Between']])('refuse the operator token %j', (op) => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op, value: 1 } }, {}), 'ra', /condition\.op/);
  });

  it.each([[{ a: 1 }], [[1]]])('refuse the non-scalar value %j', (value) => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Eq', value } }, {}), 'ra', /must be a scalar/);
  });

  it('refuse a relational operator against a boolean', () => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Lt', value: false } }, {}), 'ra', /Lt cannot compare against a boolean/);
  });

  it('refuse a comparison without a value but let Exists/NotExists go without one', () => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Eq' } }, {}), 'ra', /Eq needs a value/);
    valid(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Exists' } }, {}));
  });

  it('refuse an unknown condition member and a non-boolean default', () => {
    only(router({ kind: 'Parallel' }, { condition: { path: 'output.x', op: 'Eq', value: 1, not: true } }, {}), 'ra', /unknown member 'not'/);
    only(router({ kind: 'Parallel' }, { default: 'yes' }, {}), 'ra', /default must be a boolean/);
  });

  it('accept null values for optional members', () => {
    valid(router({ kind: 'Parallel' }, { label: null, condition: null, default: null, sourceHandle: 'x' }, {}));
  });
});

describe('Pause nodes', () => {
  const pause = { kind: 'Pause', config: { prompt: 'Go?', allowedDecisions: ['Approve', 'Reject'] } };
  const onDecision = (value: string) => ({ condition: { path: 'output.decision', op: 'Eq', value } });

  it('accept out-edges covering every allowed decision', () => {
    valid(router(pause, onDecision('Approve'), onDecision('Reject')));
  });

  it('refuse a decision no out-edge fires on', () => {
    only(router(pause, onDecision('Approve'), onDecision('Approved')), 'r', /offers 'Reject' but no out-edge fires on it/);
  });

  it('count an unconditional or default out-edge as firing on every decision', () => {
    valid(router(pause, onDecision('Approve'), {}));
    valid(router(pause, onDecision('Approve'), { default: true }));
  });

  it('judge conditions through the routing evaluator (Ne fires on the other decision)', () => {
    valid(router(pause, onDecision('Approve'), { condition: { path: 'output.decision', op: 'Ne', value: 'Approve' } }));
  });

  it('refuse decisions outside Approve/Reject and an empty list', () => {
    only(router({ ...pause, config: { prompt: 'Go?', allowedDecisions: ['Answer'] } }, {}, onDecision('Approve')), 'r', /allowedDecisions may hold only Approve and Reject/);
    only(router({ ...pause, config: { prompt: 'Go?', allowedDecisions: [] } }, {}, onDecision('Approve')), 'r', /allowedDecisions must be a non-empty array/);
  });
});

describe('ChatInput nodes', () => {
  const chatInput = { kind: 'ChatInput', config: { prompt: 'Anything else?' } };

  it('are accepted in a Chat graph with an unconditional out-edge', () => {
    valid({ ...around(chatInput), kind: 'Chat' });
  });

  it('are refused outside a Chat graph', () => {
    only(around(chatInput), 'work', /allowed only in a Chat graph/);
  });

  it('are refused without an unconditional out-edge', () => {
    const d = { ...around(chatInput), kind: 'Chat' };
    edge(d, 'e2').condition = { path: 'output.text', op: 'Exists' };
    only(d, 'work', /needs an unconditional out-edge/);
  });
});

describe('graph header', () => {
  it('refuses a schemaVersion other than 1', () => {
    only({ ...baseline(), schemaVersion: 2 }, null, /schemaVersion must be 1/);
    valid({ ...baseline(), schemaVersion: 1 });
  });

  it('refuses an unknown graph kind and a chat block outside a Chat graph', () => {
    only({ ...baseline(), kind: 'chat' }, null, /graph kind must be "Standard" or "Chat"/);
    only({ ...baseline(), chat: { acceptsAttachments: true } }, null, /allowed only on a Chat graph/);
  });

  it('fills Chat defaults and refuses unknown chat members', () => {
    const r = parse({ ...baseline(), kind: 'Chat' });
    expect(r.ok && r.graph.chat).toEqual({ acceptsAttachments: false, requireRerunConfirmation: true });
    only({ ...baseline(), kind: 'Chat', chat: { greeting: 'hi' } }, null, /unknown member 'greeting'/);
  });

  it('refuses an invalid graph inputSchema / outputSchema, keyed null', () => {
    only({ ...baseline(), inputSchema: { type: 'nope' } }, null, /graph inputSchema is not a valid JSON Schema/);
    only({ ...baseline(), outputSchema: 'object' }, null, /graph outputSchema must be a JSON Schema object/);
  });
});

describe('accumulation', () => {
  it('returns every accumulated error of a graph at once, each keyed', () => {
    const d = canonicalEight() as Doc;
    node(d, 'analyze').config = { instructions: 'x', temperature: 1 };
    node(d, 'lookup').config = { toolName: 'rm_rf' };
    node(d, 'check').joinPolicy = 'Any';
    node(d, 'done').maxAttempts = 0;
    edge(d, 'e9').condition = { path: 'output.decision', op: 'Eq', value: 'Rejected' };
    d.edges.push({ key: 'e10', from: 'fanout', to: 'merge' });
    const keys = errorsOf(d).map((e) => e.key);
    expect(keys.sort()).toEqual(['analyze', 'check', 'done', 'e10', 'lookup', 'review']);
  });
});

describe('documents from the lossless JSON parser', () => {
  it('accept an exact big-integer condition value and keep it exact', () => {
    const text = JSON.stringify(router({ kind: 'Parallel' }, { condition: { path: 'output.id', op: 'Gt', value: 0 } }, {})).replace('"value":0', '"value":9007199254740993');
    const r = parse(parseJsonExact(text));
    expect(r.ok).toBe(true);
    if (r.ok) {
      const value = r.graph.edges[1]!.condition!.value as unknown;
      expect(value).toBeInstanceOf(JsonNumber);
      expect(stringifyJsonExact(value)).toBe('9007199254740993');
    }
  });
});

describe('element shapes', () => {
  it('refuses a node or edge that is not an object, keyed null and naming its index', () => {
    const d = baseline() as unknown as { nodes: unknown[]; edges: unknown[] };
    d.nodes.push(7);
    only(d, null, /nodes\[3\] must be an object, not a number/);
    const e = baseline() as unknown as { nodes: unknown[]; edges: unknown[] };
    e.edges.push('e3');
    only(e, null, /edges\[2\] must be an object, not a string/);
  });

  it('refuses a node without a string key', () => {
    const d = baseline();
    d.nodes.push({ kind: 'Parallel' });
    only(d, null, /nodes\[3\]\.key must be a string, not absent/);
  });

  it('refuses an edge whose from is not a string and a non-string edge label', () => {
    const d = baseline();
    d.edges.push({ key: 'e3', from: 1, to: 'done' });
    only(d, 'e3', /edge\.from must be a node key, not a number/);
    const l = baseline();
    edge(l, 'e2').label = ['x'];
    only(l, 'e2', /label must be a string, not an array/);
  });

  it('accepts a ChatInput whose only out-edge is a default edge (the run still goes somewhere)', () => {
    const d = { ...around({ kind: 'ChatInput', config: { prompt: 'p' } }), kind: 'Chat' };
    edge(d, 'e2').default = true;
    valid(d);
  });

  it('refuses a graph member outside the contract, keyed null', () => {
    only({ ...baseline(), title: 'x' }, null, /^graph member 'title' is not part of the graph contract$/);
  });

  it('only warns about a graph member outside the contract when re-parsing a stored document', () => {
    const r = parse({ ...baseline(), title: 'x' }, { ...OPTS, stored: true });
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([{ key: null, message: expect.stringMatching(/graph member 'title' .* is ignored/) }]);
  });
});
