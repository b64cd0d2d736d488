import { describe, expect, it } from 'vitest';
import { validateGraph } from './parse-graph';
import { OPTS, around, baseline, edge, errorsOf, node, warningsOf } from './fixtures/builders';
import type { Doc } from './fixtures/builders';
import { canonicalEight } from './fixtures/canonical-eight';

const pause = { kind: 'Pause', config: { prompt: 'Go?', allowedDecisions: ['Approve'] } };

describe('warnings', () => {
  it('never refuse: a warned graph validates as valid', () => {
    const v = validateGraph(around(pause), OPTS);
    expect(v.valid).toBe(true);
    expect(v.errors).toEqual([]);
    expect(v.warnings.length).toBeGreaterThan(0);
  });

  it('key a node fed only by a Pause to that node, naming the content to wire in', () => {
    expect(warningsOf(around(pause))).toEqual([
      { key: 'done', message: expect.stringMatching(/every inbound edge of 'done' leaves a Pause\/ChatInput \('work'\).*edge from 'start' to 'done'/) },
    ]);
  });

  it('do not warn a node that something other than the Pause also feeds, nor an Any node', () => {
    const d = around(pause);
    d.edges.push({ key: 'e3', from: 'start', to: 'done' });
    expect(warningsOf(d)).toEqual([]);
    node(d, 'done').joinPolicy = 'Any';
    d.edges.pop();
    d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { path: 'output.comment', op: 'Exists' } });
    expect(errorsOf(d)).toEqual([]);
    expect(warningsOf(d)).toEqual([]);
  });

  it('flag a response schema that is not an object schema', () => {
    const d = around({ kind: 'LlmCall', config: { prompt: 'x', responseJsonSchema: { type: 'string' } } });
    expect(warningsOf(d)).toEqual([{ key: 'work', message: expect.stringMatching(/root is not `"type": "object"`/) }]);
  });

  it('flag value keywords, optional properties and open objects in a response schema', () => {
    const d = around({ kind: 'Agent', config: { instructions: 'x', responseJsonSchema: { type: 'object', properties: { s: { type: 'string', maxLength: 3 } } } } });
    const [w] = warningsOf(d);
    expect(w!.key).toBe('work');
    expect(w!.message).toMatch(/drops 'maxLength'/);
    expect(w!.message).toMatch(/'s' are optional/);
    expect(w!.message).toMatch(/forbids additional properties/);
  });

  it('accept the canonical graph without warnings', () => {
    expect(warningsOf(canonicalEight())).toEqual([]);
  });

  it('flag an All join over mutually exclusive branches (unreachable by routing)', () => {
    const d = canonicalEight() as Doc;
    node(d, 'fanout').joinPolicy = 'All';
    expect(warningsOf(d)).toEqual([{ key: 'fanout', message: expect.stringMatching(/exclusive branches of 'check' \('e3' and 'e4'\)/) }]);
  });

  it('flag a First join whose source also feeds another node (shared join)', () => {
    const d: Doc = {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'a', kind: 'Tool', config: { toolName: 'echo' } },
        { key: 'b', kind: 'Tool', config: { toolName: 'echo' } },
        { key: 'j', kind: 'Join', joinPolicy: 'First' },
        { key: 'done', kind: 'End', config: { outcome: 'ok' } },
      ],
      edges: [
        { key: 'sa', from: 'start', to: 'a' },
        { key: 'sb', from: 'start', to: 'b' },
        { key: 'aj', from: 'a', to: 'j' },
        { key: 'bj', from: 'b', to: 'j' },
        { key: 'jd', from: 'j', to: 'done' },
        { key: 'bd', from: 'b', to: 'done' },
      ],
    };
    expect(errorsOf(d)).toEqual([]);
    expect(warningsOf(d)).toEqual([{ key: 'j', message: expect.stringMatching(/'b' also feed\(s\) other nodes/) }]);
  });

  it('flag a condition on a decision or choice the source cannot produce', () => {
    const d = around({ kind: 'DecisionModel', config: { question: 'q', labels: ['yes', 'no'] } });
    edge(d, 'e2').condition = { path: 'output.choice', op: 'Eq', value: 'maybe' };
    d.edges.push({ key: 'e3', from: 'work', to: 'done', default: true });
    node(d, 'done').joinPolicy = 'Any';
    expect(warningsOf(d)).toEqual([{ key: 'e2', message: expect.stringMatching(/never fires: DecisionModel 'work' produces only "yes", "no"/) }]);
  });

  it('flag a condition path outside the output envelope', () => {
    const d = baseline();
    d.edges.push({ key: 'e3', from: 'work', to: 'done', condition: { path: 'json.x', op: 'Exists' } });
    expect(warningsOf(d)).toEqual([{ key: 'e3', message: expect.stringMatching(/does not start at an output envelope member/) }]);
  });

  it('refuse node and edge members outside the contract, keyed to their element', () => {
    const d = baseline();
    node(d, 'work').width = 120;
    edge(d, 'e1').animated = true;
    expect(errorsOf(d)).toEqual([
      { key: 'work', message: "LlmCall 'work': node member 'width' is not part of the graph contract" },
      { key: 'e1', message: "edge 'e1': edge member 'animated' is not part of the graph contract" },
    ]);
    expect(warningsOf(d)).toEqual([]);
  });

  it('flag members outside the contract without refusing them when re-parsing a stored document', () => {
    const d = baseline();
    node(d, 'work').width = 120;
    edge(d, 'e1').animated = true;
    const stored = { ...OPTS, stored: true };
    expect(errorsOf(d, stored)).toEqual([]);
    expect(warningsOf(d, stored).map((w) => w.key)).toEqual(['work', 'e1']);
  });
});
