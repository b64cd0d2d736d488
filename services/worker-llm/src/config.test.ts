import { describe, expect, it } from 'vitest';
import { parseConfig } from '@flowline/runtime';
import { llmWorkerConfigSchema } from './config';

describe('worker-llm config', () => {
  it('has documented defaults: scripted provider, no admission limits, streaming on', () => {
    const result = parseConfig(llmWorkerConfigSchema, {});
    expect(result.ok && result.value).toMatchObject({
      LANE_CONCURRENCY: 8,
      QUEUE_PREFIX: '{flowline}',
      LLM_MAX_CONCURRENT_CALLS: 0,
      LLM_TOKENS_PER_MINUTE: 0,
      LLM_STREAM: true,
      MAX_RUN_INPUT_BYTES: 65_536,
    });
    expect(result.ok && result.value.LLM_BASE_URL).toBeUndefined();
  });

  it('parses LLM_PROVIDERS JSON and names a bad entry without showing its value', () => {
    const ok = parseConfig(llmWorkerConfigSchema, { LLM_PROVIDERS: '{"big":{"baseUrl":"http://h:1/v1","maxConcurrentCalls":2}}' });
    expect(ok.ok && ok.value.LLM_PROVIDERS).toEqual({ big: { baseUrl: 'http://h:1/v1', maxConcurrentCalls: 2 } });
    const bad = parseConfig(llmWorkerConfigSchema, { LLM_PROVIDERS: '{"big":{"baseUrl":"nope","apiKey":"sk-s3cret"}}' });
    expect(bad.ok).toBe(false);
    const text = bad.ok ? '' : bad.issues.join('\n');
    expect(text).toContain('LLM_PROVIDERS');
    expect(text).not.toContain('s3cret');
  });
});
