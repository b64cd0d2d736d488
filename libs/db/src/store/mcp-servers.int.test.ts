import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@flowline/testing';
import { configureEncryption } from '../crypto';
import {
  createMcpServer,
  deleteMcpServer,
  existingMcpServerNames,
  getMcpServer,
  listMcpServers,
  mcpServerForUse,
  McpServerNameTakenError,
  updateMcpServer,
  type McpServerInput,
} from './mcp-servers';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(() => configureEncryption(null));

const input = (name: string, extra: Partial<McpServerInput> = {}): McpServerInput => ({
  name,
  url: 'https://mcp.example/mcp',
  transport: 'streamable-http',
  headers: { authorization: 'Bearer s3cret' },
  allowedTools: null,
  timeoutMs: 30_000,
  ...extra,
});

describe('mcp server store', () => {
  it('keeps a server per tenant, shows header names only, and opens the headers for use', async () => {
    const made = await createMcpServer(db.pool, 't1', input('docs'));
    expect(made).toMatchObject({ name: 'docs', headerNames: ['authorization'], allowedTools: null, version: 1 });
    expect(JSON.stringify(await listMcpServers(db.pool, 't1'))).not.toContain('s3cret');
    expect(await getMcpServer(db.pool, 't1', made.id)).toMatchObject({ name: 'docs' });
    expect(await getMcpServer(db.pool, 't1', 'docs')).toMatchObject({ id: made.id });
    expect(await getMcpServer(db.pool, 't2', made.id)).toBeNull();
    expect((await mcpServerForUse(db.pool, 't1', 'docs'))?.headers).toEqual({ authorization: 'Bearer s3cret' });
    expect(await mcpServerForUse(db.pool, 't2', 'docs')).toBeNull();
    await expect(createMcpServer(db.pool, 't1', input('docs'))).rejects.toBeInstanceOf(McpServerNameTakenError);
    expect(await createMcpServer(db.pool, 't2', input('docs'))).toMatchObject({ name: 'docs' });
  });

  it('keeps the headers on an update that omits them, replaces them when given, and bumps the version', async () => {
    const made = await createMcpServer(db.pool, 't3', input('a'));
    const { headers: _omit, ...rest } = input('a2', { allowedTools: ['echo'] });
    const kept = await updateMcpServer(db.pool, 't3', made.id, rest);
    expect(kept).toMatchObject({ name: 'a2', allowedTools: ['echo'], headerNames: ['authorization'], version: 2 });
    expect((await mcpServerForUse(db.pool, 't3', 'a2'))?.headers).toEqual({ authorization: 'Bearer s3cret' });
    const cleared = await updateMcpServer(db.pool, 't3', 'a2', input('a2', { headers: {} }));
    expect(cleared).toMatchObject({ headerNames: [], version: 3 });
    expect(await updateMcpServer(db.pool, 't4', made.id, input('x'))).toBeNull();
    await createMcpServer(db.pool, 't3', input('b'));
    await expect(updateMcpServer(db.pool, 't3', 'b', input('a2'))).rejects.toBeInstanceOf(McpServerNameTakenError);
    expect(await existingMcpServerNames(db.pool, 't3', ['a2', 'b', 'zz'])).toEqual(new Set(['a2', 'b']));
    expect(await deleteMcpServer(db.pool, 't3', 'b')).toBe(true);
    expect(await deleteMcpServer(db.pool, 't3', 'b')).toBe(false);
    // text no server can be named never reaches SQL (a NUL byte would fail the statement)
    expect(await getMcpServer(db.pool, 't3', 'a\u0000b')).toBeNull();
    expect(await deleteMcpServer(db.pool, 't3', '\ud800')).toBe(false);
    expect(await updateMcpServer(db.pool, 't3', 'a\u0000', input('x'))).toBeNull();
  });

  it('seals the headers at rest when encryption is on', async () => {
    configureEncryption('0'.repeat(64));
    const made = await createMcpServer(db.pool, 't5', input('sealed'));
    const { rows } = await db.pool.query<{ headers: string }>('select headers::text as headers from mcp_servers where id = $1', [made.id]);
    expect(rows[0]?.headers).toContain('"$enc"');
    expect(rows[0]?.headers).not.toContain('s3cret');
    expect((await mcpServerForUse(db.pool, 't5', 'sealed'))?.headers).toEqual({ authorization: 'Bearer s3cret' });
  });
});
