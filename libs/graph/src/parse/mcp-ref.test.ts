import { describe, expect, it } from 'vitest';
import { mcpServersOf, parseMcpToolRef } from './mcp-ref';
import { parseGraph } from './parse-graph';
import { startIssues } from './start-check';
import { around, OPTS } from './fixtures/builders';
import type { McpCatalog } from './mcp-ref';

const catalog: McpCatalog = { servers: new Set(['everything', 'memory']) };
const errorsOf = (node: Record<string, unknown>, mcp: McpCatalog | null = catalog) => {
  const res = parseGraph(around(node as never), mcp === null ? OPTS : { ...OPTS, mcp });
  return res.ok ? [] : res.errors.map((e) => `${e.key}: ${e.message}`);
};

describe('mcp: tool names', () => {
  it('reads a server and a tool, or a server wildcard', () => {
    expect(parseMcpToolRef('mcp:everything/get-sum')).toEqual({ server: 'everything', tool: 'get-sum' });
    expect(parseMcpToolRef('mcp:memory/*')).toEqual({ server: 'memory', tool: null });
    expect(parseMcpToolRef('mcp:bad server/x')).toHaveProperty('error');
    expect(parseMcpToolRef('mcp:everything')).toHaveProperty('error');
    expect(parseMcpToolRef('mcp:everything/')).toHaveProperty('error');
  });

  it('lets a Tool node name a tool of a server the tenant has', () => {
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:everything/echo', arguments: { message: 'hi' } } })).toEqual([]);
  });

  it('refuses a Tool node naming an unknown server, a wildcard or allowedUrls, keyed to the node', () => {
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:nowhere/echo' } })).toEqual([
      expect.stringMatching(/^work: .*unknown MCP server 'nowhere'/),
    ]);
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:everything/*' } })).toEqual([expect.stringMatching(/wildcard/)]);
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:everything/echo', allowedUrls: ['https://a.example/'] } })).toEqual([
      expect.stringMatching(/allowedUrls applies only to tools that require it; an MCP tool does not/),
    ]);
  });

  it('judges only the form of a name when no catalog is given (a stored graph re-parsed)', () => {
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:nowhere/echo' } }, null)).toEqual([]);
    expect(errorsOf({ kind: 'Tool', config: { toolName: 'mcp:no where/echo' } }, null)).toHaveLength(1);
  });

  it('lets an Agent offer MCP tools and whole servers next to catalog tools', () => {
    expect(errorsOf({ kind: 'Agent', config: { instructions: 'x', tools: ['echo', 'mcp:memory/*', 'mcp:everything/get-sum'] } })).toEqual([]);
    expect(errorsOf({ kind: 'Agent', config: { instructions: 'x', tools: ['mcp:gone/*'] } })).toEqual([
      expect.stringMatching(/config\.tools: unknown MCP server 'gone'/),
    ]);
  });

  it('lists the servers a graph names', () => {
    const doc = around({ kind: 'Agent', config: { instructions: 'x', tools: ['mcp:memory/*', 'echo', 'mcp:everything/echo', 'mcp:memory/read_graph'] } });
    expect(mcpServersOf(doc)).toEqual(['memory', 'everything']);
  });

  it('refuses a start once the server is gone or no longer lists the tool, and not while its listing is unknown', () => {
    const res = parseGraph(around({ kind: 'Tool', config: { toolName: 'mcp:everything/echo' } }), { ...OPTS, mcp: catalog });
    if (!res.ok) throw new Error('invalid');
    expect(startIssues(res.graph, { ...OPTS, mcp: catalog })).toEqual([]);
    expect(startIssues(res.graph, { ...OPTS, mcp: { servers: new Set(['everything']), listed: new Map([['everything', new Set(['echo'])]]) } })).toEqual([]);
    expect(startIssues(res.graph, { ...OPTS, mcp: { servers: new Set(['everything']), listed: new Map([['everything', new Set(['get-sum'])]]) } })).toEqual([
      { key: 'work', message: "MCP server 'everything' does not list the tool 'echo' now" },
    ]);
    expect(startIssues(res.graph, { ...OPTS, mcp: { servers: new Set() } })).toEqual([{ key: 'work', message: expect.stringMatching(/unknown MCP server/) }]);
    // the registry check never sees an MCP name
    expect(startIssues(res.graph, OPTS)).toEqual([]);
  });
});
