import { describe, expect, it } from 'vitest';
import { JsonNumber, type JsonObject } from '@flowline/graph';
import { ToolError, createToolRegistry, type InvokeContext, type ToolContext, type ToolDefinition } from './index';

const INPUT = { run: { input: { order: 7 } }, upstream: {}, input: null };

function ctx(overrides: Partial<InvokeContext> = {}): InvokeContext {
  return { signal: new AbortController().signal, allowedUrls: [], runId: 'run-1', nodeKey: 'pay', attempt: 1, invocationId: 'inv-1', input: INPUT, ...overrides };
}

async function failureOf(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ToolError)) throw new Error(`expected a ToolError, got ${String(error)}`);
  return error;
}

describe('tool registry', () => {
  it("hands a tool the run, node, attempt, invocation, input document and an idempotency key stable across the node's retries", async () => {
    const seen: ToolContext[] = [];
    const spy: ToolDefinition = {
      name: 'spy', description: 'records its context', argumentsSchema: { type: 'object' }, requiresAllowedUrls: false,
      run: (_args, c) => (seen.push(c), null),
    };
    const registry = await createToolRegistry({ extraTools: [spy] });
    await registry.invoke('spy', {}, ctx());
    await registry.invoke('spy', {}, ctx({ attempt: 2, invocationId: 'inv-2' }));
    expect(seen[0]).toMatchObject({ runId: 'run-1', nodeKey: 'pay', attempt: 1, invocationId: 'inv-1', input: INPUT, idempotencyKey: 'run-1:pay' });
    expect(seen[1]).toMatchObject({ attempt: 2, invocationId: 'inv-2', idempotencyKey: 'run-1:pay' });
    // an Agent's calls are distinct effects: each adds the transcript step recording it
    await registry.invoke('spy', {}, ctx({ nodeKey: 'agent', agentCall: 2 }));
    expect(seen[2]!.idempotencyKey).toBe('run-1:agent:2');
    expect(seen[2]).not.toHaveProperty('agentCall');
  });

  it('lists the built-ins sorted by name, without test tools by default', async () => {
    const registry = await createToolRegistry();
    expect(registry.catalog().map((t) => t.name)).toEqual(['echo', 'http_fetch', 'json_extract', 'read_file', 'wait']);
    expect(registry.asParserCatalog().get('http_fetch')).toEqual({ requiresAllowedUrls: true });
    expect(registry.asParserCatalog().get('echo')).toEqual({ requiresAllowedUrls: false });
    expect(registry.catalog().find((t) => t.name === 'wait')?.argumentsSchema).toMatchObject({ required: ['ms'] });
  });

  it('registers test_fail and counter with testTools', async () => {
    const registry = await createToolRegistry({ testTools: true });
    expect(registry.has('test_fail')).toBe(true);
    expect(registry.has('counter')).toBe(true);
  });

  it('loads tools from TOOL_MODULES paths', async () => {
    const registry = await createToolRegistry({ modules: ['./test/fixtures/extra-tools.ts'] });
    expect(await registry.invoke('shout', { text: 'hi' }, ctx())).toEqual({ text: 'HI' });
  });

  it('refuses a module that registers a name twice and a module that cannot be loaded', async () => {
    await expect(createToolRegistry({ modules: ['./test/fixtures/duplicate-tools.ts'] })).rejects.toThrow(/registered twice/);
    await expect(createToolRegistry({ modules: ['./test/fixtures/missing.ts'] })).rejects.toMatchObject({ code: 'ToolRegistryInvalid' });
  });

  it('echo returns its arguments', async () => {
    const registry = await createToolRegistry();
    expect(await registry.invoke('echo', { a: 1, b: [true, null] }, ctx())).toEqual({ a: 1, b: [true, null] });
  });

  it('echo returns numbers a double cannot hold exactly, and arguments holding them are judged by their nearest double', async () => {
    const registry = await createToolRegistry();
    const args = { big: new JsonNumber('9007199254740993'), list: [new JsonNumber('-1e400'), 2] } as unknown as JsonObject;
    expect(await registry.invoke('echo', args, ctx())).toEqual(args);
    expect(await registry.invoke('json_extract', { value: args, path: 'big' }, ctx())).toEqual(new JsonNumber('9007199254740993'));
    // wait's `ms` must be an integer: a JsonNumber spelling one is accepted
    expect(await registry.invoke('wait', { ms: new JsonNumber('0e5') } as unknown as JsonObject, ctx())).toEqual({ waitedMs: 0 });
  });

  it('json_extract returns the value at a dot path, or null when missing', async () => {
    const registry = await createToolRegistry();
    expect(await registry.invoke('json_extract', { value: { a: { b: 'x' } }, path: 'a.b' }, ctx())).toBe('x');
    expect(await registry.invoke('json_extract', { value: { a: 1 }, path: 'a.z' }, ctx())).toBeNull();
  });

  it('fails ValidationFailed (not retryable) on arguments that break the schema, without quoting them', async () => {
    const registry = await createToolRegistry();
    const error = await failureOf(registry.invoke('wait', { ms: 'secret-token' }, ctx()));
    expect(error.failureClass).toBe('ValidationFailed');
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain('secret-token');
    expect((await failureOf(registry.invoke('json_extract', { value: 1, path: 'a..b' }, ctx()))).failureClass).toBe('ValidationFailed');
  });

  it('fails ValidationFailed for an unknown tool', async () => {
    const registry = await createToolRegistry();
    expect((await failureOf(registry.invoke('nope', {}, ctx()))).failureClass).toBe('ValidationFailed');
  });

  it('test_fail fails retryably below untilAttempt and echoes from it on', async () => {
    const registry = await createToolRegistry({ testTools: true });
    const error = await failureOf(registry.invoke('test_fail', { untilAttempt: 3 }, ctx({ attempt: 2 })));
    expect(error.failureClass).toBe('NodeFailed');
    expect(error.retryable).toBe(true);
    expect(await registry.invoke('test_fail', { untilAttempt: 3, x: 1 }, ctx({ attempt: 3 }))).toEqual({ untilAttempt: 3, x: 1 });
  });

  it('counter counts calls per key', async () => {
    const registry = await createToolRegistry({ testTools: true });
    const key = `k-${Math.random()}`;
    await registry.invoke('counter', { key }, ctx());
    expect(await registry.invoke('counter', { key }, ctx({ invocationId: 'inv-2' }))).toEqual({ key, count: 2, invocationId: 'inv-2' });
  });

  it('wait returns once the time has passed', async () => {
    const registry = await createToolRegistry();
    expect(await registry.invoke('wait', { ms: 5 }, ctx())).toEqual({ waitedMs: 5 });
  });

  it('wait ends with the class the abort reason carries when cancelled', async () => {
    const registry = await createToolRegistry();
    const controller = new AbortController();
    const pending = failureOf(registry.invoke('wait', { ms: 60_000 }, ctx({ signal: controller.signal })));
    controller.abort(new ToolError('Timeout', 'deadline passed'));
    const error = await pending;
    expect(error.failureClass).toBe('Timeout');
  });

  it('wait ends Cancelled when aborted without a typed reason', async () => {
    const registry = await createToolRegistry();
    const controller = new AbortController();
    const pending = failureOf(registry.invoke('wait', { ms: 60_000 }, ctx({ signal: controller.signal })));
    controller.abort();
    expect((await pending).failureClass).toBe('Cancelled');
  });

  it('reports an untyped tool error as NodeFailed without its message', async () => {
    const registry = await createToolRegistry({
      extraTools: [
        {
          name: 'boom',
          description: 'throws',
          argumentsSchema: { type: 'object' },
          requiresAllowedUrls: false,
          run: () => {
            throw new TypeError('password=hunter2');
          },
        },
      ],
    });
    const error = await failureOf(registry.invoke('boom', {}, ctx()));
    expect(error.failureClass).toBe('NodeFailed');
    expect(error.message).toBe('tool boom failed (TypeError)');
  });
});
