import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkServerUrl, parseAllowedHosts } from './network-guard';
import { loadStdioServers, McpConfigError } from './server-spec';
import { mcpFunctionName, mcpProgressText } from './toolbox';

const dir = mkdtempSync(join(tmpdir(), 'flowline-mcp-config-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('MCP_STDIO_SERVERS_FILE', () => {
  it('reads each server with its defaults', () => {
    const servers = loadStdioServers(file('ok.json', JSON.stringify({ servers: { memory: { command: 'node', args: ['m.js'], allowedTools: ['read_graph'] } } })));
    expect(servers.get('memory')).toEqual({
      name: 'memory', transport: 'stdio', command: 'node', args: ['m.js'], env: {}, cwd: null, allowedTools: ['read_graph'], timeoutMs: 30_000, version: 1,
    });
    expect(loadStdioServers(null).size).toBe(0);
  });

  it('refuses a missing file, bad JSON, an unknown member or a bad name, naming the option', () => {
    const bad = [
      join(dir, 'absent.json'),
      file('bad.json', '{ nope'),
      file('member.json', JSON.stringify({ servers: { memory: { command: 'node', shell: true } } })),
      file('name.json', JSON.stringify({ servers: { 'bad name': { command: 'node' } } })),
      file('command.json', JSON.stringify({ servers: { memory: { command: '' } } })),
    ];
    for (const path of bad) {
      expect(() => loadStdioServers(path)).toThrow(McpConfigError);
      expect(() => loadStdioServers(path)).toThrow(/^MCP_STDIO_SERVERS_FILE: /);
    }
  });
});

describe('MCP server URLs', () => {
  const none = parseAllowedHosts(undefined);
  it('accepts a public http(s) URL and refuses private literals, other schemes and credentials', () => {
    expect(checkServerUrl('https://mcp.example/mcp', none).host).toBe('mcp.example');
    for (const url of ['http://127.0.0.1/mcp', 'http://[::1]/mcp', 'http://10.0.0.5/mcp', 'http://[::ffff:192.168.1.1]/', 'ftp://mcp.example/', 'https://u:p@mcp.example/', 'not a url']) {
      expect(() => checkServerUrl(url, none), url).toThrow();
    }
  });

  it('admits a private literal listed in MCP_ALLOWED_HOSTS, IPv6 with or without brackets', () => {
    const allowed = parseAllowedHosts(' 127.0.0.1 , [::1],Internal.Example ');
    expect([...allowed]).toEqual(['127.0.0.1', '::1', 'internal.example']);
    expect(checkServerUrl('http://127.0.0.1:8080/mcp', allowed).port).toBe('8080');
    expect(checkServerUrl('http://[::1]/mcp', allowed).hostname).toBe('[::1]');
    expect(() => checkServerUrl('http://127.0.0.2/mcp', allowed)).toThrow(/private address/);
  });
});

describe('names and progress shown to models and operators', () => {
  it('offers an MCP tool under a provider-safe function name of at most 64 characters', () => {
    expect(mcpFunctionName('memory', 'read_graph')).toBe('mcp__memory__read_graph');
    expect(mcpFunctionName('docs', 'search.v2/all')).toBe('mcp__docs__search_v2_all');
    expect(mcpFunctionName('s', 'x'.repeat(100))).toHaveLength(64);
  });

  it('writes progress as "progress n/total: message"', () => {
    expect(mcpProgressText({ progress: 2, total: 5 })).toBe('progress 2/5');
    expect(mcpProgressText({ progress: 3 })).toBe('progress 3');
    expect(mcpProgressText({ progress: 1, total: 4, message: 'indexing' })).toBe('progress 1/4: indexing');
  });
});
