import { describe, expect, it } from 'vitest';
import { createProviderRegistry } from './registry';

describe('provider registry', () => {
  it('uses the scripted provider when no base URL is set', () => {
    const r = createProviderRegistry({});
    expect(r.defaultName).toBe('scripted');
    expect(r.resolve(null)).toMatchObject({ model: 'scripted', key: 'scripted/scripted' });
  });

  it('routes "<provider>/<model>" pins to named providers and other pins to the default', () => {
    const r = createProviderRegistry({
      baseUrl: 'http://127.0.0.1:1/v1',
      defaultModel: 'base',
      maxConcurrentCalls: 4,
      providers: { big: { baseUrl: 'http://127.0.0.1:2/v1', maxConcurrentCalls: 1 } },
    });
    expect(r.resolve(undefined)).toMatchObject({ model: 'base', key: 'default/base', limits: { maxConcurrentCalls: 4 } });
    expect(r.resolve('big/llama')).toMatchObject({ model: 'llama', key: 'big/llama', limits: { maxConcurrentCalls: 1 } });
    expect(r.resolve('meta-llama/Llama-3')).toMatchObject({ model: 'meta-llama/Llama-3', key: 'default/meta-llama/Llama-3' });
    expect(r.resolve('big/llama').provider.name).toBe('big');
  });

  it('refuses ValidationFailed when no model can be chosen', () => {
    const r = createProviderRegistry({ baseUrl: 'http://127.0.0.1:1/v1' });
    expect(() => r.resolve(null)).toThrow(expect.objectContaining({ failureClass: 'ValidationFailed' }));
  });
});
