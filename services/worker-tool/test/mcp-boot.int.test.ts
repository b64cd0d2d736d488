import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnService, testRedisUrl, uniquePrefix } from '@flowline/testing';
import { serviceDir } from './helpers';

describe('worker-tool boot with MCP_STDIO_SERVERS_FILE', () => {
  it('stops at boot, naming the option and the member, when the stdio servers file is malformed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowline-mcp-boot-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: { memory: { command: 'node', shell: true } } }));
    const w = await spawnService({ cwd: serviceDir, env: { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix(), MCP_STDIO_SERVERS_FILE: file }, readyText: null });
    expect(await w.exited).toBe(1);
    expect(w.output()).toContain('invalid configuration:');
    expect(w.output()).toContain(`MCP_STDIO_SERVERS_FILE: ${file}`);
    expect(w.output()).not.toContain('worker-tool ready');
  });
});
