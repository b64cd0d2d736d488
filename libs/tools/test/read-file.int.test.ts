import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError, createToolRegistry, type ToolRegistry } from '../src/index';

const ctx = () => ({ signal: new AbortController().signal, allowedUrls: [], runId: 'r', nodeKey: 'n', input: { run: { input: null }, upstream: {}, input: null }, attempt: 1, invocationId: 'inv-1' });

async function failureClass(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  return error instanceof ToolError ? error.failureClass : `not a ToolError: ${String(error)}`;
}

describe('read_file', () => {
  let base: string;
  let root: string;
  let registry: ToolRegistry;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'fl-read-file-'));
    root = join(base, 'root');
    await mkdir(join(root, 'docs'), { recursive: true });
    await writeFile(join(root, 'docs', 'a.txt'), 'hello');
    await writeFile(join(base, 'secret.txt'), 'outside');
    await writeFile(join(root, 'big.txt'), 'x'.repeat(64));
    await symlink(join(base, 'secret.txt'), join(root, 'escape.txt'));
    await symlink(join(root, 'docs', 'a.txt'), join(root, 'inside-link.txt'));
    await symlink(base, join(root, 'up'));
    registry = await createToolRegistry({ filesRoot: root, maxFileBytes: 32 });
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('reads a file by its path relative to the root', async () => {
    expect(await registry.invoke('read_file', { path: 'docs/a.txt' }, ctx())).toEqual({ path: 'docs/a.txt', content: 'hello', sizeBytes: 5 });
  });

  it('follows a symlink that stays inside the root', async () => {
    expect(await registry.invoke('read_file', { path: 'inside-link.txt' }, ctx())).toMatchObject({ content: 'hello' });
  });

  it('refuses .. segments, absolute paths and symlinks that leave the root', async () => {
    expect(await failureClass(registry.invoke('read_file', { path: '../secret.txt' }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: 'docs/../../secret.txt' }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: join(base, 'secret.txt') }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: 'escape.txt' }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: 'up/secret.txt' }, ctx()))).toBe('ValidationFailed');
  });

  it('refuses a missing file, a directory and a file over the size cap', async () => {
    expect(await failureClass(registry.invoke('read_file', { path: 'nope.txt' }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: 'docs' }, ctx()))).toBe('ValidationFailed');
    expect(await failureClass(registry.invoke('read_file', { path: 'big.txt' }, ctx()))).toBe('ValidationFailed');
  });

  it('refuses every read when no files root is configured', async () => {
    const bare = await createToolRegistry();
    expect(await failureClass(bare.invoke('read_file', { path: 'docs/a.txt' }, ctx()))).toBe('ValidationFailed');
  });
});
