import { describe, expect, it } from 'vitest';
import { parseConfig } from '@flowline/runtime';
import { toolModulesOf, toolWorkerConfigSchema } from './config';

describe('worker-tool config', () => {
  it('defaults concurrency to 100 (an I/O-bound lane), the shared prefix and both flags off', () => {
    const result = parseConfig(toolWorkerConfigSchema, {});
    expect(result.ok && result.value).toMatchObject({
      LANE_CONCURRENCY: 100,
      QUEUE_PREFIX: '{flowline}',
      WF_TEST_TOOLS: false,
      HTTP_FETCH_ALLOW_PRIVATE: false,
      SHUTDOWN_GRACE_MS: 10_000,
      WORKER_LOCK_MS: 10_000,
    });
  });

  it('refuses a job lock shorter than 200 ms, naming WORKER_LOCK_MS', () => {
    const result = parseConfig(toolWorkerConfigSchema, { WORKER_LOCK_MS: '150' });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.issues.join('\n')).toContain('WORKER_LOCK_MS');
    const ok = parseConfig(toolWorkerConfigSchema, { WORKER_LOCK_MS: '2000' });
    expect(ok.ok && ok.value.WORKER_LOCK_MS).toBe(2000);
  });

  it('reads flags and splits TOOL_MODULES on commas', () => {
    const result = parseConfig(toolWorkerConfigSchema, { WF_TEST_TOOLS: '1', HTTP_FETCH_ALLOW_PRIVATE: 'true', TOOL_MODULES: './a.ts, pkg-b ,' });
    if (!result.ok) throw new Error(result.issues.join('\n'));
    expect(result.value.WF_TEST_TOOLS).toBe(true);
    expect(result.value.HTTP_FETCH_ALLOW_PRIVATE).toBe(true);
    expect(toolModulesOf(result.value)).toEqual(['./a.ts', 'pkg-b']);
  });

  it('names every invalid option', () => {
    const result = parseConfig(toolWorkerConfigSchema, { LANE_CONCURRENCY: '0', WF_TEST_TOOLS: 'yes' });
    expect(result.ok).toBe(false);
    const text = result.ok ? '' : result.issues.join('\n');
    expect(text).toContain('LANE_CONCURRENCY');
    expect(text).toContain('WF_TEST_TOOLS');
  });
});
