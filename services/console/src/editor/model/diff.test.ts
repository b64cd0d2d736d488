import { describe, expect, it } from 'vitest';
import type { DefinitionDiff } from '@flowline/client';
import { changeCount, changeText, diffMarks, valueText } from './diff';

const diff = (over: Partial<DefinitionDiff> = {}): DefinitionDiff => ({
  definitionId: 'd',
  from: 1,
  to: 2,
  identical: false,
  nodes: { added: [], removed: [], changed: [] },
  edges: { added: [], removed: [], changed: [] },
  inputSchema: { changed: false, from: null, to: null },
  stateSchema: { changed: false, from: null, to: null },
  graph: [],
  ...over,
});

describe('diffMarks', () => {
  it('marks removed elements on the older side, added ones on the newer side, changed ones on both', () => {
    const m = diffMarks(
      diff({
        nodes: { added: [{ key: 'after', kind: 'Tool' }], removed: [{ key: 'old', kind: 'Pause' }], changed: [{ key: 'llm', kind: 'LLM', changes: [{ member: 'config.model', from: 'a', to: 'b' }] }] },
        edges: { added: [{ key: 'e9', from: 'p', to: 'after' }], removed: [{ key: 'e2', from: 'p', to: 'end' }], changed: [{ key: 'e1', changes: [{ member: 'label', from: null, to: 'go' }] }] },
      }),
    );
    expect([...m.from.nodes]).toEqual([['old', 'removed'], ['llm', 'changed']]);
    expect([...m.to.nodes]).toEqual([['after', 'added'], ['llm', 'changed']]);
    expect([...m.from.edges]).toEqual([['e2', 'removed'], ['e1', 'changed']]);
    expect([...m.to.edges]).toEqual([['e9', 'added'], ['e1', 'changed']]);
  });

  it('marks nothing for identical versions', () => {
    const m = diffMarks(diff({ identical: true }));
    expect(m.from.nodes.size + m.to.nodes.size + m.from.edges.size + m.to.edges.size).toBe(0);
    expect(changeCount(diff({ identical: true }))).toBe(0);
  });
});

describe('change text', () => {
  it('reads a member change as before → after, absent members named, long values cut', () => {
    expect(changeText({ member: 'config.model', from: 'small', to: 'large' })).toBe('config.model: "small" → "large"');
    expect(changeText({ member: 'label', from: null, to: 'Go' })).toBe('label: (absent) → "Go"');
    expect(valueText('x'.repeat(200), 10)).toBe(`"${'x'.repeat(8)}…`);
  });

  it('counts every element and schema the diff touches', () => {
    expect(changeCount(diff({ nodes: { added: [{ key: 'a', kind: 'Tool' }], removed: [], changed: [] }, inputSchema: { changed: true, from: null, to: {} }, graph: [{ member: 'name', from: 'a', to: 'b' }] }))).toBe(3);
  });
});
