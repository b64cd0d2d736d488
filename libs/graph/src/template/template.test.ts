import { describe, expect, it } from 'vitest';
import type { InputDocument, Json } from '../model';
import { checkTemplateText, declaredStateKeys } from './check';
import { DEFAULT_TEMPLATE_LIMITS, renderConfigMember, renderString, renderTemplateValue, templateScope, type TemplateScope } from './render';

const doc: InputDocument = {
  run: { input: { topic: 'tides', n: 3 } },
  upstream: { search: { status: 'succeeded', attempt: 1, branch: null, output: { ids: [4, 5], hits: { a: 1 } } } },
  input: { status: 'succeeded', attempt: 1, branch: null, output: { ids: [4, 5], hits: { a: 1 } } },
  state: { count: 2, ids: ['x', 'y'] },
};
const scope = templateScope(doc);
const L = DEFAULT_TEMPLATE_LIMITS;
const render = (text: string, s: TemplateScope = scope, limits = L) => renderString(text, s, limits);

describe('rendering', () => {
  it('returns text without {{ or {% as it is, byte for byte, whatever it holds', () => {
    for (const text of ['Summarise the input.', '{ "a": 1 } } {', 'a { { b', '{#', '', '   \n\t', '😀 {x}']) {
      expect(render(text)).toEqual({ value: text });
    }
  });

  it('keeps the JSON type of a value that is exactly one placeholder', () => {
    expect(render('{{ state.ids }}')).toEqual({ value: ['x', 'y'] });
    expect(render('{{ upstream.search.output.hits }}')).toEqual({ value: { a: 1 } });
    expect(render('{{ run.input.n }}')).toEqual({ value: 3 });
    expect(render('{{ state.ids | size }}')).toEqual({ value: 2 });
    expect(render('{{- input.output.ids -}}')).toEqual({ value: [4, 5] });
  });

  it('renders text around a placeholder, objects and arrays as JSON', () => {
    expect(render(' {{ state.ids }}')).toEqual({ value: ' ["x","y"]' });
    expect(render('About {{ run.input.topic }}: {{ input.output.hits }} ({{ state.count | plus: 1 }})')).toEqual({ value: 'About tides: {"a":1} (3)' });
    expect(render('{% for id in input.output.ids %}[{{ id }}]{% endfor %}')).toEqual({ value: '[4][5]' });
  });

  it('reads the run state as {} when the document has none', () => {
    const { state: _state, ...without } = doc;
    expect(render('{{ state }}', templateScope(without))).toEqual({ value: {} });
  });

  it('fails on a missing value (strict) but lets default and if test one', () => {
    expect(render('{{ input.output.nope }}')).toEqual({ error: expect.stringMatching(/undefined variable: input\.output\.nope/) });
    expect(render('{{ input.output.nope | default: "none" }}')).toEqual({ value: 'none' });
    expect(render('{% if state.missing %}y{% else %}n{% endif %}')).toEqual({ value: 'n' });
  });

  it('reads no prototype member, file, clock or randomness', () => {
    expect(render('{{ run.constructor }}')).toEqual({ error: expect.stringMatching(/undefined variable/) });
    expect(render('{{ run.input.topic.__proto__ }}')).toEqual({ error: expect.stringMatching(/undefined variable/) });
    expect(render('{% include "secrets" %}')).toEqual({ error: expect.stringMatching(/include tag is not available/) });
    expect(render('{% render "x" %}')).toEqual({ error: expect.stringMatching(/render tag is not available/) });
    expect(render('{{ "now" | date: "%Y" }}')).toEqual({ error: expect.stringMatching(/reads no clock/) });
    expect(render('{{ "2024-03-01T10:00:00Z" | date: "%Y-%m-%d %H" }}')).toEqual({ value: '2024-03-01 10' });
    expect(render('{{ state.ids | sample }}')).toEqual({ error: expect.stringMatching(/undefined filter: sample/) });
  });

  it('never changes the document it reads', () => {
    const before = JSON.stringify(scope);
    render('{% assign state = 1 %}{{ input.output.ids | push: 9 | pop | shift }}{{ state.ids | sort | reverse }}{% increment run %}{% decrement input %}');
    expect(JSON.stringify(scope)).toBe(before);
  });

  it('stops a render past MAX_TEMPLATE_OUTPUT_BYTES, typed or text', () => {
    const small = { maxOutputBytes: 1024, renderLimitMs: 500 };
    expect(render('{% for i in (1..100) %}{{ run.input.topic }}{% endfor %}', scope, small)).toEqual({ value: 'tides'.repeat(100) });
    expect(render('{% for i in (1..1000) %}{{ run.input.topic }}{% endfor %}', scope, small)).toEqual({ error: expect.stringMatching(/over 1024 UTF-8 bytes/) });
    const big = templateScope({ ...doc, run: { input: { list: Array.from({ length: 500 }, (_, i) => i) } } });
    expect(render('{{ run.input.list }}', big, small)).toEqual({ error: expect.stringMatching(/over 1024 UTF-8 bytes/) });
  });

  it('stops runaway work: a huge range by the allocation counter, nested loops by the time backstop', () => {
    expect(render('{% for i in (1..100000000) %}{% endfor %}')).toEqual({ error: expect.stringMatching(/memory alloc limit exceeded/) });
    const fast = { maxOutputBytes: 262_144, renderLimitMs: 20 };
    expect(render('{% for i in (1..2000) %}{% for j in (1..2000) %}{% for k in (1..2000) %}{% endfor %}{% endfor %}{% endfor %}', scope, fast)).toEqual({
      error: expect.stringMatching(/render limit exceeded/),
    });
  });

  it('writes the characters {{ themselves through raw or a quoted literal, as the docs say', () => {
    expect(render('Reply with {% raw %}{{ name }}{% endraw %} kept')).toEqual({ value: 'Reply with {{ name }} kept' });
    expect(render('Use {{ "{{" }} literally')).toEqual({ value: 'Use {{ literally' });
    expect(checkTemplateText('Reply with {% raw %}{{ name }}{% endraw %}', { stateKeys: null, nodeKeys: new Set() })).toBeNull();
  });

  it('refuses a placeholder whose value JSON cannot hold', () => {
    expect(render('{{ 1 | divided_by: 0 }}')).toEqual({ error: expect.stringMatching(/JSON cannot hold/) });
  });

  it('renders objects and arrays member by member, names never templated, and says where a failure sits', () => {
    const args: Json = { '{{ k }}': '{{ state.ids }}', list: ['a', '{{ run.input.n }}'], n: 1, b: true, z: null };
    expect(renderTemplateValue(args, scope, L)).toEqual({ ok: true, value: { '{{ k }}': ['x', 'y'], list: ['a', 3], n: 1, b: true, z: null } });
    expect(renderTemplateValue({ a: { b: ['ok', '{{ nope.x }}'] } }, scope, L)).toEqual({ ok: false, path: ['a', 'b', 1], error: expect.stringMatching(/undefined variable/) });
    expect(renderConfigMember('fetch', 'arguments', { ids: '{{ input.output.zz }}' }, scope, L)).toEqual({
      error: expect.stringMatching(/^nodes\.fetch\.config\.arguments\.ids: undefined variable: input\.output\.zz/),
    });
  });
});

describe('checking at validation', () => {
  const ctx = { stateKeys: new Set(['count', 'ids']), nodeKeys: new Set(['search', 'start']) };
  it.each([
    ['{{ run.input.topic }} {{ input.output }} {{ upstream.search.output }} {{ state.count }}', null],
    ['{% for x in state.ids %}{{ x }}{{ forloop.index }}{% endfor %}{% assign y = 1 %}{{ y }}', null],
    ['no template at all {', null],
    ['{{ inputs.text }}', /'inputs', which is not a template root/],
    ['{{ state.total }}', /state\.total, which state\.schema does not declare/],
    ['{{ upstream.nowhere.output }}', /upstream\.nowhere, which names no node/],
    ['{{ run.input.topic ', /template syntax error: .*not closed/],
    ['{% if %}', /template syntax error/],
    ['{{ x | shout }}', /template syntax error: undefined filter: shout/],
    ['{% include "x" %}', /include tag is not available/],
  ])('%s', (text, expected) => {
    const r = checkTemplateText(text, ctx);
    if (expected === null) expect(r).toBeNull();
    else expect(r).toMatch(expected);
  });

  it('allows any state key when the graph declares no state schema', () => {
    expect(checkTemplateText('{{ state.anything }}', { stateKeys: null, nodeKeys: new Set() })).toBeNull();
  });

  it('reads the declared state keys tolerantly', () => {
    expect(declaredStateKeys({ schema: { type: 'object', properties: { a: {}, b: {} } } })).toEqual(new Set(['a', 'b']));
    expect(declaredStateKeys({ schema: { a: { type: 'number' } } })).toEqual(new Set(['a']));
    expect(declaredStateKeys({ schema: { type: 'object' } })).toBeNull();
    expect(declaredStateKeys({ reducers: {} })).toBeNull();
    expect(declaredStateKeys(undefined)).toBeNull();
    expect(declaredStateKeys('junk')).toBeNull();
  });
});
