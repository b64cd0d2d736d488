/** The backlog options of issue #16 at boot: defaults, and a bad value stops the boot naming the option. */
import { describe, expect, it } from 'vitest';
import { parseConfig, parseConfigOrThrow } from './config';
import { backlogOptions, defineConfig, maxPendingRunsOf } from './options';

const schema = defineConfig(backlogOptions);

describe('backlog options', () => {
  it('default to 10000 Pending runs per tenant, a 5 s Retry-After and no TTL', () => {
    expect(parseConfigOrThrow(schema, {})).toEqual({ MAX_PENDING_RUNS: 10_000, TENANT_MAX_PENDING_RUNS: '', BACKLOG_RETRY_AFTER_S: 5, PENDING_RUN_TTL_MS: 0 });
  });

  it('give each tenant its override, else MAX_PENDING_RUNS', () => {
    const of = maxPendingRunsOf(parseConfigOrThrow(schema, { MAX_PENDING_RUNS: '50', TENANT_MAX_PENDING_RUNS: 'big=5000, open=0' }));
    expect([of('big'), of('open'), of('other')]).toEqual([5000, 0, 50]);
  });

  it.each([
    [{ MAX_PENDING_RUNS: '-1' }, 'MAX_PENDING_RUNS'],
    [{ MAX_PENDING_RUNS: 'many' }, 'MAX_PENDING_RUNS'],
    [{ TENANT_MAX_PENDING_RUNS: 'a=1,a=2' }, "TENANT_MAX_PENDING_RUNS: tenant 'a' is listed twice"],
    [{ TENANT_MAX_PENDING_RUNS: 'a' }, "TENANT_MAX_PENDING_RUNS: 'a' is not tenant=value"],
    [{ BACKLOG_RETRY_AFTER_S: '0' }, 'BACKLOG_RETRY_AFTER_S'],
    [{ PENDING_RUN_TTL_MS: '-5' }, 'PENDING_RUN_TTL_MS'],
    [{ PENDING_RUN_TTL_MS: '1.5' }, 'PENDING_RUN_TTL_MS'],
  ])('refuse %j naming the option', (env, named) => {
    const r = parseConfig(schema, env);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.issues.join('\n')).toContain(named);
  });
});
