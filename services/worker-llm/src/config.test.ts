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

  it('defaults the attachment options and names an invalid budget', () => {
    const ok = parseConfig(llmWorkerConfigSchema, {});
    expect(ok.ok && ok.value.MAX_ATTACHMENT_TEXT_BYTES).toBe(65_536);
    expect(ok.ok && ok.value.ATTACHMENT_RESOLVER_MODULE).toBeUndefined();
    const bad = parseConfig(llmWorkerConfigSchema, { MAX_ATTACHMENT_TEXT_BYTES: '0' });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? '' : bad.issues.join('\n')).toContain('MAX_ATTACHMENT_TEXT_BYTES');
    const set = parseConfig(llmWorkerConfigSchema, { ATTACHMENT_RESOLVER_MODULE: './resolver.mjs', MAX_ATTACHMENT_TEXT_BYTES: '1024' });
    expect(set.ok && set.value).toMatchObject({ ATTACHMENT_RESOLVER_MODULE: './resolver.mjs', MAX_ATTACHMENT_TEXT_BYTES: 1_024 });
  });

  it('defaults the model discovery options and refuses a retry ceiling under its floor', () => {
    const ok = parseConfig(llmWorkerConfigSchema, {});
    expect(ok.ok && ok.value).toMatchObject({ LLM_MODELS_TIMEOUT_MS: 5_000, LLM_MODELS_RETRY_MIN_MS: 1_000, LLM_MODELS_RETRY_MAX_MS: 30_000 });
    const bad = parseConfig(llmWorkerConfigSchema, { LLM_MODELS_RETRY_MIN_MS: '5000', LLM_MODELS_RETRY_MAX_MS: '1000' });
    expect(bad.ok ? [] : bad.issues).toEqual([expect.stringMatching(/^LLM_MODELS_RETRY_MAX_MS: must be at least LLM_MODELS_RETRY_MIN_MS/)]);
    const tooShort = parseConfig(llmWorkerConfigSchema, { LLM_MODELS_TIMEOUT_MS: '5' });
    expect(tooShort.ok ? '' : tooShort.issues.join('\n')).toContain('LLM_MODELS_TIMEOUT_MS');
  });
});
