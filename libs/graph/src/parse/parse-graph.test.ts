import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Json } from '../model';
import { parseGraph, validateGraph } from './parse-graph';
import { BUILTIN_TOOLS, canonicalEight, canonicalEightWithEcho } from './fixtures/canonical-eight';
import { OPTS } from './fixtures/builders';

const isIssueList = (v: unknown) =>
  Array.isArray(v) && v.every((i) => (i.key === null || typeof i.key === 'string') && typeof i.message === 'string');

describe('parseGraph', () => {
  it('accepts the canonical eight-node graph without errors or warnings', () => {
    const r = parseGraph(canonicalEight(), OPTS);
    expect(r).toMatchObject({ ok: true, warnings: [] });
    if (!r.ok) return;
    expect(r.graph.nodes.map((n) => n.key)).toEqual(['start', 'analyze', 'check', 'review', 'lookup', 'fanout', 'merge', 'done']);
    expect(r.graph.edges.find((e) => e.key === 'e3')!.condition).toEqual({ path: 'output.json.requiresReview', op: 'Eq', value: true });
  });

  it('accepts the canonical graph with its Agent replaced by an echo Tool', () => {
    expect(validateGraph(canonicalEightWithEcho(), OPTS)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('refuses the canonical graph when the Agent offers a tool outside the catalog', () => {
    const tools = new Map(BUILTIN_TOOLS);
    tools.delete('read_file');
    const v = validateGraph(canonicalEight(), { maxNodes: 200, tools });
    expect(v.valid).toBe(false);
    expect(v.errors.map((e) => e.key)).toEqual(['analyze', 'lookup']);
  });

  it('re-parses its own output to the same graph (a pinned copy parses again)', () => {
    const first = parseGraph(canonicalEight(), OPTS);
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    const again = parseGraph(JSON.parse(JSON.stringify(first.graph)), OPTS);
    expect(again.ok && again.graph).toEqual(first.graph);
  });

  it('answers any JSON value with a result and never throws', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (doc) => {
        const r = parseGraph(doc, OPTS);
        expect(typeof r.ok).toBe('boolean');
        expect(isIssueList(r.warnings)).toBe(true);
        if (!r.ok) expect(r.errors.length).toBeGreaterThan(0);
        if (!r.ok) expect(isIssueList(r.errors)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('answers mutated canonical graphs with a result and never throws', () => {
    const nodeMembers = ['key', 'kind', 'label', 'joinPolicy', 'maxAttempts', 'timeoutSeconds', 'retryBackoff', 'onError', 'inputSchema', 'config', 'position', 'x'];
    const edgeMembers = ['key', 'from', 'to', 'label', 'condition', 'default', 'sourceHandle'];
    const configMembers = ['path', 'prompt', 'allowedDecisions', 'toolName', 'allowedUrls', 'tools', 'responseJsonSchema', 'outcome', 'labels', 'exitCondition'];
    const anyJson = fc.jsonValue({ maxDepth: 3 }).map((v) => v as Json);
    const mutation = fc.oneof(
      fc.record({ where: fc.constant('node' as const), index: fc.nat(9), member: fc.constantFrom(...nodeMembers), value: anyJson }),
      fc.record({ where: fc.constant('edge' as const), index: fc.nat(10), member: fc.constantFrom(...edgeMembers), value: anyJson }),
      fc.record({ where: fc.constant('config' as const), index: fc.nat(9), member: fc.constantFrom(...configMembers), value: anyJson }),
      fc.record({ where: fc.constant('graph' as const), index: fc.constant(0), member: fc.constantFrom('nodes', 'edges', 'kind', 'schemaVersion', 'chat', 'inputSchema'), value: anyJson }),
    );
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        const doc = canonicalEight() as Record<string, Json>;
        for (const m of mutations) {
          const list = (m.where === 'edge' ? doc.edges : doc.nodes) as Json[];
          if (m.where === 'graph') doc[m.member] = m.value;
          else if (!Array.isArray(list)) continue;
          else if (m.index >= list.length) list.push(m.value);
          else {
            const target = list[m.index];
            if (typeof target !== 'object' || target === null || Array.isArray(target)) continue;
            if (m.where === 'config') {
              const c = target.config;
              if (typeof c === 'object' && c !== null && !Array.isArray(c)) c[m.member] = m.value;
            } else target[m.member] = m.value;
          }
        }
        const r = parseGraph(doc, OPTS);
        expect(typeof r.ok).toBe('boolean');
        if (!r.ok) expect(isIssueList(r.errors) && r.errors.length > 0).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('answers a pathologically nested document without throwing', () => {
    let deep: unknown = { type: 'object' };
    for (let i = 0; i < 50_000; i++) deep = { type: 'object', properties: { a: deep } };
    const doc = canonicalEight() as Record<string, unknown>;
    doc.inputSchema = deep;
    const r = parseGraph(doc, OPTS);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.key).toBeNull();
  });
});
