import { describe, expect, it } from 'vitest';
import { parseGraph } from './parse-graph';
import { startIssues } from './start-check';
import { around, OPTS, type Doc } from './fixtures/builders';
import type { Graph } from '../model';

function parsed(d: Doc): Graph {
  const res = parseGraph(d, OPTS);
  if (!res.ok) throw new Error(JSON.stringify(res.errors));
  return res.graph;
}

const without = (name: string) => new Map([...OPTS.tools].filter(([k]) => k !== name));

describe('startIssues', () => {
  it('finds nothing in a graph checked against the same cap and catalog', () => {
    const g = parsed(around({ kind: 'Tool', config: { toolName: 'echo' } }));
    expect(startIssues(g, OPTS)).toEqual([]);
  });

  it('names the Tool node whose tool is no longer registered', () => {
    const g = parsed(around({ kind: 'Tool', config: { toolName: 'echo' } }));
    const issues = startIssues(g, { ...OPTS, tools: without('echo') });
    expect(issues).toEqual([{ key: 'work', message: expect.stringMatching(/^tool 'echo' is no longer registered/) }]);
  });

  it('names the Agent offering a tool that is no longer registered', () => {
    const g = parsed(around({ kind: 'Agent', config: { instructions: 'x', tools: ['echo'] } }));
    const issues = startIssues(g, { ...OPTS, tools: without('echo') });
    expect(issues.map((i) => i.key)).toEqual(['work']);
  });

  it('refuses a graph larger than the cap as it is now', () => {
    const g = parsed(around({ kind: 'Tool', config: { toolName: 'echo' } }));
    expect(startIssues(g, { ...OPTS, maxNodes: 2 })).toEqual([{ key: null, message: 'the graph has 3 nodes; at most 2 are allowed now' }]);
    expect(startIssues(g, { ...OPTS, maxNodes: 3 })).toEqual([]);
  });
});
