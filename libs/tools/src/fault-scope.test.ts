import { describe, expect, it } from 'vitest';
import { ToolModuleFault, attributeLeakedError, runInFaultScope } from './fault-scope';

const later = (f: () => void, ms = 5) => setTimeout(f, ms);

describe('fault scopes of tool calls', () => {
  it('attributes an error surfacing in async work a call started to that call and fails it ToolModuleFault', async () => {
    const seen: unknown[] = [];
    const call = runInFaultScope('leaky', 'inv-1', () => {
      // what a process handler sees: the async context of the leak is the call's
      later(() => seen.push(attributeLeakedError(new TypeError('socket gone'))));
      return new Promise<never>(() => undefined); // the call itself would wait forever
    });
    const error = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolModuleFault);
    expect(error).toMatchObject({
      code: 'ToolModuleFault',
      failureClass: 'NodeFailed',
      retryable: true,
      message: 'tool leaky leaked an asynchronous error (TypeError) outside its call: ToolModuleFault',
    });
    expect(seen).toEqual([{ tool: 'leaky', invocationId: 'inv-1', failedCall: true }]);
  });

  it('names the call of a leak surfacing after it finished without failing anything, and nothing outside any call', async () => {
    const seen: unknown[] = [];
    let surfaced!: () => void;
    const done = new Promise<void>((r) => (surfaced = r));
    const result = await runInFaultScope('done-early', 'inv-2', () => {
      later(() => {
        seen.push(attributeLeakedError(new Error('late')));
        surfaced();
      }, 20);
      return 'ok';
    });
    expect(result).toBe('ok');
    await done;
    expect(seen).toEqual([{ tool: 'done-early', invocationId: 'inv-2', failedCall: false }]);
    expect(attributeLeakedError(new Error('outside'))).toBeNull();
  });

  it('keeps calls apart: a leak fails only the call it surfaced under', async () => {
    const quiet = runInFaultScope('quiet', 'inv-a', () => new Promise<string>((r) => later(() => r('fine'), 30)));
    const noisy = runInFaultScope('noisy', 'inv-b', () => {
      later(() => void attributeLeakedError(new Error('x')));
      return new Promise<never>(() => undefined);
    });
    await expect(noisy).rejects.toBeInstanceOf(ToolModuleFault);
    expect(await quiet).toBe('fine');
  });
});
