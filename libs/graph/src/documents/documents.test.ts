import { describe, expect, it } from 'vitest';
import type { NodeRunState } from '../planner/types';
import { edge, graphOf, node, pendingRow } from '../planner/test-kit';
import {
  buildEnvelope,
  buildInputDocument,
  checkOutputSize,
  endOutput,
  inlineOutput,
  joinOutput,
  passThroughOutput,
  startOutput,
  utf8ByteLength,
} from './index';
import type { Json, OutputEnvelope } from '../model';
import { JsonNumber } from '../conditions/exact-json';

const cond = (path: string, value: string | number | boolean) => ({ path, op: 'Eq' as const, value });

describe('buildEnvelope', () => {
  const outs = [
    edge('u', 'a', 'x'),
    edge('c1', 'a', 'y', { label: 'first', condition: cond('output.v', 1) }),
    edge('c2', 'a', 'z', { condition: cond('output.v', 1) }),
    edge('d', 'a', 'w', { default: true, label: 'fallback' }),
  ];

  it('names the label of the first conditional out-edge that fired as branch', () => {
    expect(buildEnvelope(outs, { status: 'succeeded', attempt: 2, output: { v: 1 } })).toEqual({
      status: 'succeeded',
      attempt: 2,
      branch: 'first',
      output: { v: 1 },
    });
  });

  it('names the edge key when the firing conditional edge has no label', () => {
    const e = buildEnvelope(outs.slice(2), { status: 'succeeded', attempt: 1, output: { v: 1 } });
    expect(e.branch).toBe('c2');
  });

  it('names the default edge when no conditional sibling fired', () => {
    expect(buildEnvelope(outs, { status: 'succeeded', attempt: 1, output: { v: 2 } }).branch).toBe('fallback');
  });

  it('never names an unconditional edge as branch', () => {
    expect(buildEnvelope([edge('u', 'a', 'x')], { status: 'succeeded', attempt: 1, output: {} }).branch).toBeNull();
  });

  it('carries the error class and reason on a failed envelope', () => {
    const e = buildEnvelope([], { status: 'failed', attempt: 3, output: null, error: { class: 'NodeFailed', reason: 'x' } });
    expect(e).toEqual({ status: 'failed', attempt: 3, branch: null, output: null, error: { class: 'NodeFailed', reason: 'x' } });
  });
});

describe('output size', () => {
  it('counts UTF-8 bytes, astral characters as four', () => {
    expect(utf8ByteLength('"a"')).toBe(3);
    expect(utf8ByteLength({ t: 'é😀' })).toBe('{"t":""}'.length + 2 + 4);
  });

  it('counts a number a double cannot hold as the digits that are stored', () => {
    const token = '123456789012345678901234567890';
    expect(utf8ByteLength({ n: new JsonNumber(token) } as unknown as Json)).toBe(`{"n":${token}}`.length);
  });

  it('fails an envelope over the cap OutputTooLarge and passes one at the cap', () => {
    const env: OutputEnvelope = { status: 'succeeded', attempt: 1, branch: null, output: 'x'.repeat(100) };
    const size = utf8ByteLength(env);
    expect(checkOutputSize(env, size)).toBeNull();
    expect(checkOutputSize(env, size - 1)?.class).toBe('OutputTooLarge');
  });
});

describe('buildInputDocument', () => {
  const g = graphOf(
    [node('s', 'Start'), node('a', 'Tool'), node('b', 'Tool'), node('j', 'Join'), node('e', 'End')],
    [edge('e1', 's', 'a'), edge('e2', 's', 'b'), edge('e3', 'a', 'j'), edge('e4', 'b', 'j', { condition: cond('output.go', true) }), edge('e5', 'j', 'e')],
  );
  const settled = (key: string, output: OutputEnvelope['output']): NodeRunState => ({
    ...pendingRow(g.nodes.find((n) => n.key === key)!),
    status: 'Succeeded',
    attempt: 1,
    output: { status: 'succeeded', attempt: 1, branch: null, output },
  });

  it('hands a node its single satisfied predecessor envelope as input', () => {
    const doc = buildInputDocument(g, 'a', { q: 1 }, [settled('s', { input: { q: 1 } })]);
    expect(doc.run).toEqual({ input: { q: 1 } });
    expect(doc.input).toEqual(doc.upstream['s']);
    expect(Object.keys(doc.upstream)).toEqual(['s']);
  });

  it('hands the upstream map as input when several predecessors are satisfied', () => {
    const doc = buildInputDocument(g, 'j', null, [settled('a', 1), settled('b', { go: true })]);
    expect(Object.keys(doc.upstream)).toEqual(['a', 'b']);
    expect(doc.input).toEqual(doc.upstream);
  });

  it('leaves a predecessor whose edge did not fire out of upstream', () => {
    const doc = buildInputDocument(g, 'j', null, [settled('a', 1), settled('b', { go: false })]);
    expect(Object.keys(doc.upstream)).toEqual(['a']);
  });

  it('hands null as input when no predecessor is satisfied', () => {
    expect(buildInputDocument(g, 's', 5, []).input).toBeNull();
  });

  it('lets an edge override satisfy an edge whose condition did not fire', () => {
    const doc = buildInputDocument(g, 'j', null, [settled('a', 1), settled('b', { go: false })], { e4: true });
    expect(Object.keys(doc.upstream)).toEqual(['a', 'b']);
  });
});

describe('inline outputs', () => {
  const env = (output: OutputEnvelope['output']): OutputEnvelope => ({ status: 'succeeded', attempt: 1, branch: null, output });

  it('gives Start the run input, or config.defaultInput when the run input is null', () => {
    expect(startOutput(node('s', 'Start'), { a: 1 })).toEqual({ input: { a: 1 } });
    expect(startOutput(node('s', 'Start', { config: { defaultInput: { d: true } } }), null)).toEqual({ input: { d: true } });
  });

  it('passes a Condition its single predecessor output verbatim and {} with several', () => {
    expect(passThroughOutput({ run: { input: null }, upstream: { a: env({ x: 1 }) }, input: env({ x: 1 }) })).toEqual({ x: 1 });
    const two = { a: env(1), b: env(2) };
    expect(passThroughOutput({ run: { input: null }, upstream: two, input: two })).toEqual({});
  });

  it('gives a Join the map of satisfied inbound envelopes', () => {
    const up = { a: env(1), b: env(2) };
    expect(joinOutput({ run: { input: null }, upstream: up, input: up })).toEqual({
      a: { status: 'succeeded', attempt: 1, branch: null, output: 1 },
      b: { status: 'succeeded', attempt: 1, branch: null, output: 2 },
    });
  });

  it('gives an End its outcome and the value at resultPath, null when missing, the whole document without a path', () => {
    const doc = { run: { input: 7 }, upstream: { a: env({ r: 'yes' }) }, input: env({ r: 'yes' }) };
    expect(endOutput(node('e', 'End', { config: { outcome: 'ok', resultPath: 'input.output.r' } }), doc)).toEqual({ outcome: 'ok', result: 'yes' });
    expect(endOutput(node('e', 'End', { config: { outcome: 'ok', resultPath: 'input.output.zz' } }), doc)).toEqual({ outcome: 'ok', result: null });
    const whole = endOutput(node('e', 'End', { config: { outcome: 'ok' } }), doc);
    expect(whole['result']).toEqual({ run: { input: 7 }, upstream: { a: { status: 'succeeded', attempt: 1, branch: null, output: { r: 'yes' } } }, input: { status: 'succeeded', attempt: 1, branch: null, output: { r: 'yes' } } });
  });

  it('has no inline output for work kinds', () => {
    expect(inlineOutput(node('t', 'Tool'), { run: { input: null }, upstream: {}, input: null }, null)).toBeNull();
  });
});
