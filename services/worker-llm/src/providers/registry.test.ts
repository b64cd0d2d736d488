import { describe, expect, it } from 'vitest';
import { createProviderRegistry } from './registry';

describe('provider registry', () => {
  it('uses the scripted provider when no base URL is set', async () => {
    const r = createProviderRegistry({});
    expect(r.defaultName).toBe('scripted');
    expect(r.discovery).toBeNull();
    expect(await r.resolve(null)).toMatchObject({ model: 'scripted', key: 'scripted/scripted' });
  });

  it('routes "<provider>/<model>" pins to named providers and other pins to the default', async () => {
    const r = createProviderRegistry({
      baseUrl: 'http://127.0.0.1:1/v1',
      defaultModel: 'base',
      maxConcurrentCalls: 4,
      providers: { big: { baseUrl: 'http://127.0.0.1:2/v1', maxConcurrentCalls: 1 } },
    });
    expect(r.discovery).toBeNull();
    expect(await r.resolve(undefined)).toMatchObject({ model: 'base', key: 'default/base', limits: { maxConcurrentCalls: 4 } });
    expect(await r.resolve('big/llama')).toMatchObject({ model: 'llama', key: 'big/llama', limits: { maxConcurrentCalls: 1 } });
    expect(await r.resolve('meta-llama/Llama-3')).toMatchObject({ model: 'meta-llama/Llama-3', key: 'default/meta-llama/Llama-3' });
    expect((await r.resolve('big/llama')).provider.name).toBe('big');
  });

  it('discovers the default model when LLM_MODEL is unset, and fails retryably (NodeFailed) while the provider does not answer', async () => {
    const r = createProviderRegistry({ baseUrl: 'http://127.0.0.1:1/v1', discovery: { timeoutMs: 2_000 } });
    expect(r.discovery).not.toBeNull();
    await expect(r.resolve(null)).rejects.toMatchObject({ failureClass: 'NodeFailed', message: expect.stringMatching(/provider is unavailable/) });
    // a pin needs no discovery
    expect(await r.resolve('pinned')).toMatchObject({ model: 'pinned', key: 'default/pinned' });
  });
});
