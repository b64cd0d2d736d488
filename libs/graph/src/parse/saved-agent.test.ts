import { describe, expect, it } from 'vitest';
import { agentReferences } from './agent-ref';
import { parseToolApprovals } from './tool-approvals';
import { parseGraph } from './parse-graph';
import { mergeSavedAgent, parseSavedAgent } from './saved-agent';
import { BUILTIN_TOOLS } from './fixtures/canonical-eight';
import { around, OPTS } from './fixtures/builders';
import type { SavedAgentCatalog } from './agent-ref';

const ID = '11111111-1111-4111-8111-111111111111';
const agents: SavedAgentCatalog = new Map([[ID, 3]]);
const errorsOf = (config: Record<string, unknown>, catalog: SavedAgentCatalog | null = agents) => {
  const res = parseGraph(around({ kind: 'Agent', config } as never), catalog === null ? OPTS : { ...OPTS, agents: catalog });
  return res.ok ? [] : res.errors.map((e) => `${e.key}: ${e.message}`);
};

describe('an Agent node naming a saved agent', () => {
  it('needs no instructions of its own with agentDefinitionId, and needs them without', () => {
    expect(errorsOf({ agentDefinitionId: ID })).toEqual([]);
    expect(errorsOf({ agentDefinitionId: ID, agentVersion: 2, instructions: 'override' })).toEqual([]);
    expect(errorsOf({ tools: ['echo'] })).toEqual([expect.stringMatching(/^work: .*an Agent needs config.instructions, or a saved agent/)]);
    const versionAlone = parseGraph(around({ kind: 'Agent', config: { instructions: 'x', agentVersion: 1 } } as never), OPTS);
    expect(versionAlone.ok && versionAlone.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/agentVersion applies only with config.agentDefinitionId/)]);
  });

  it('refuses an agent the tenant does not have, or a version past its latest, keyed to the node', () => {
    expect(errorsOf({ agentDefinitionId: '22222222-2222-4222-8222-222222222222' })).toEqual([expect.stringMatching(/^work: .*unknown saved agent/)]);
    expect(errorsOf({ agentDefinitionId: ID, agentVersion: 4 })).toEqual([expect.stringMatching(/has no version 4 \(latest 3\)/)]);
    // a stored graph re-parsed (no catalog): the reference is not judged
    expect(errorsOf({ agentDefinitionId: '22222222-2222-4222-8222-222222222222' }, null)).toEqual([]);
  });

  it('reads the saved agents a document names, once each', () => {
    const doc = { nodes: [{ kind: 'Agent', config: { agentDefinitionId: ID } }, { kind: 'Agent', config: { agentDefinitionId: ID } }, { kind: 'Tool', config: { agentDefinitionId: 'x' } }] };
    expect(agentReferences(doc)).toEqual([ID]);
  });
});

describe('toolApprovals', () => {
  it('takes tool names and { tool, when } objects', () => {
    const errors = (v: unknown) => parseToolApprovals(v).errors;
    expect(errors(['echo', { tool: 'mcp:s/t', when: { path: 'arguments.x', op: 'Eq', value: 1 } }])).toEqual([]);
    expect(errors('echo')).toEqual([expect.stringMatching(/must be a list/)]);
    expect(errors([{ tool: 'a', why: 1 }, 3])).toHaveLength(2);
    expect(errorsOf({ instructions: 'x', toolApprovals: [7] })).toEqual([expect.stringMatching(/toolApprovals\[0\]/)]);
  });
});

describe('saved agent members', () => {
  it('are judged as an Agent node judges them, keyed to the member', () => {
    const ctx = { tools: BUILTIN_TOOLS, mcp: { servers: new Set(['docs']) } };
    expect(parseSavedAgent({ instructions: 'x', tools: ['echo', 'mcp:docs/search'], maxIterations: 2 }, ctx)).toEqual({
      members: { instructions: 'x', tools: ['echo', 'mcp:docs/search'], maxIterations: 2 },
      errors: [],
    });
    const bad = parseSavedAgent({ tools: ['nope', 'mcp:other/x'], maxIterations: 0, responseJsonSchema: { type: 'nope' } }, ctx);
    expect(bad.errors.map((e) => e.key).sort()).toEqual(['instructions', 'maxIterations', 'responseJsonSchema', 'tools', 'tools']);
  });

  it("merge under the node's members: each member the node sets wins", () => {
    expect(mergeSavedAgent({ instructions: 'saved', tools: ['echo'], maxIterations: 2 }, { agentDefinitionId: ID, agentVersion: 1, maxIterations: 5 })).toEqual({
      instructions: 'saved',
      tools: ['echo'],
      maxIterations: 5,
    });
  });
});
