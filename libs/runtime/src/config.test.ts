import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_OPTIONS } from '@flowline/graph';
import { loadConfig, parseConfig, parseConfigOrThrow, ConfigError } from './config';
import {
  allOptions,
  coreOptions,
  defineConfig,
  describeOptions,
  dispatchOptions,
  encryptionKeyRing,
  httpOptions,
  toCoreOptions,
} from './options';

const all = defineConfig(allOptions);

describe('config', () => {
  it('fills every CONTRACT §7 default from an empty environment', () => {
    const cfg = parseConfigOrThrow(all, {});
    expect(cfg).toMatchObject({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: 3000,
      MAX_NODES_PER_DEFINITION: 200,
      MAX_NODE_RUNS_PER_RUN: 200,
      MAX_TOTAL_ATTEMPTS: 50,
      DEFAULT_NODE_TIMEOUT_SECONDS: 600,
      MAX_OUTPUT_JSON_BYTES: 262_144,
      DISPATCH_SWEEP_MS: 500,
      MAX_CONCURRENT_RUNS: 100,
      MAX_RUN_INPUT_BYTES: 65_536,
      EVENT_REPLAY_LIMIT: 200,
      MAX_STEERS_PER_NODE: 5,
      SHARD_COUNT: 64,
      LOG_LEVEL: 'info',
    });
    expect(cfg.API_KEYS).toBeUndefined();
  });

  it('maps the core defaults to the DEFAULT_CORE_OPTIONS of libs/graph', () => {
    expect(toCoreOptions(parseConfigOrThrow(defineConfig(coreOptions), {}))).toEqual(DEFAULT_CORE_OPTIONS);
  });

  it('coerces numbers from strings and treats empty strings as unset', () => {
    const cfg = parseConfigOrThrow(defineConfig(dispatchOptions), {
      DISPATCH_SWEEP_MS: '250',
      SHARD_COUNT: '',
    });
    expect(cfg.DISPATCH_SWEEP_MS).toBe(250);
    expect(cfg.SHARD_COUNT).toBe(64);
  });

  it('names every invalid option in one report', () => {
    const r = parseConfig(all, {
      DISPATCH_SWEEP_MS: '50',
      EVENT_REPLAY_LIMIT: '5000',
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'not a url',
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const names = r.issues.map((i) => i.split(':')[0]).sort();
    expect(names).toEqual(['DATABASE_URL', 'DISPATCH_SWEEP_MS', 'EVENT_REPLAY_LIMIT', 'LOG_LEVEL', 'PORT']);
    expect(r.issues.find((i) => i.startsWith('DISPATCH_SWEEP_MS'))).toContain('"50"');
  });

  it('refuses MAX_NODE_RUNS_PER_RUN below MAX_NODES_PER_DEFINITION', () => {
    const r = parseConfig(defineConfig(coreOptions), { MAX_NODES_PER_DEFINITION: '300' });
    expect(r).toEqual({
      ok: false,
      issues: [expect.stringMatching(/^MAX_NODE_RUNS_PER_RUN: must be >= MAX_NODES_PER_DEFINITION \(300\)/)],
    });
  });

  it('parses API_KEYS into key → tenant and scopes; an entry without scopes or with * holds them all', () => {
    const schema = defineConfig(httpOptions);
    const all = ['read', 'run', 'operate', 'define', 'keys', 'audit'];
    expect(parseConfigOrThrow(schema, { API_KEYS: 'tenantA:keyA, tenantB:keyB:*, tenantA:keyR:read, tenantB:keyO: operate + read ' }).API_KEYS).toEqual({
      keyA: { tenant: 'tenantA', scopes: all },
      keyB: { tenant: 'tenantB', scopes: all },
      keyR: { tenant: 'tenantA', scopes: ['read'] },
      keyO: { tenant: 'tenantB', scopes: ['read', 'operate'] },
    });
  });

  it('grants admin only to an entry that names it (never to a bare entry or *)', () => {
    const schema = defineConfig(httpOptions);
    const parsed = parseConfigOrThrow(schema, { API_KEYS: 'ops:k1:admin, ops:k2:*+admin, acme:k3, acme:k4:*, ops:k5:read+admin' }).API_KEYS;
    expect(parsed).toEqual({
      k1: { tenant: 'ops', scopes: ['admin'] },
      k2: { tenant: 'ops', scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit', 'admin'] },
      k3: { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit'] },
      k4: { tenant: 'acme', scopes: ['read', 'run', 'operate', 'define', 'keys', 'audit'] },
      k5: { tenant: 'ops', scopes: ['read', 'admin'] },
    });
  });

  it('refuses a malformed API_KEYS naming the option and never printing a key', () => {
    const schema = defineConfig(httpOptions);
    const cases: Array<[string, RegExp]> = [
      ['tenantA', /entry 1 must be tenant:key/],
      ['tenantA:', /entry 1 must be tenant:key/],
      ['tenantA:keyA,tenantB::read', /entry 2 must be tenant:key/],
      [':keyA', /entry 1 must be tenant:key/],
      ['tenantA:keyA:read:run', /entry 1 must be tenant:key/],
      ['tenantA:keyA:root', /entry 1 names an unknown or empty scope/],
      ['tenantA:keyA:read+', /entry 1 names an unknown or empty scope/],
      ['tenantA:keyA:', /entry 1 names an unknown or empty scope/],
      ['a:k1,b:k1', /entry 2 repeats a key/],
    ];
    for (const [value, message] of cases) {
      const r = parseConfig(schema, { API_KEYS: value });
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.issues).toHaveLength(1);
      expect(r.issues[0]).toMatch(/^API_KEYS: /);
      expect(r.issues[0]).toMatch(message);
      expect(r.issues[0]).toMatch(/\(value hidden\)$/);
      for (const secret of ['keyA', 'k1', 'root']) expect(r.issues[0]).not.toContain(secret);
      expect(() => parseConfigOrThrow(schema, { API_KEYS: value })).toThrow(ConfigError);
    }
  });

  it('hides the value of an invalid secret option', () => {
    const r = parseConfig(all, { ENCRYPTION_KEY: 'short-secret' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]).toMatch(/^ENCRYPTION_KEY: .*\(value hidden\)$/);
    expect(r.issues[0]).not.toContain('short-secret');
  });

  it('parses ENCRYPTION_KEYS into a key ring with ENCRYPTION_KEY as its "default" key, and checks the current id', () => {
    const k1 = 'a'.repeat(64);
    const k2 = Buffer.alloc(32, 7).toString('base64');
    const ring = (env: Record<string, string>) => encryptionKeyRing(parseConfigOrThrow(all, env));
    expect(ring({})).toBeNull();
    expect(ring({ ENCRYPTION_KEY: k1 })).toEqual({ keys: { default: k1 }, current: 'default' });
    expect(ring({ ENCRYPTION_KEYS: `k1:${k1}` })).toEqual({ keys: { k1 }, current: 'k1' });
    expect(ring({ ENCRYPTION_KEYS: `k1:${k1}, k2:${k2}`, ENCRYPTION_KEY_CURRENT: 'k2' })).toEqual({ keys: { k1, k2 }, current: 'k2' });
    // moving from the single key: it stays readable as "default" until the re-seal is done
    expect(ring({ ENCRYPTION_KEY: k1, ENCRYPTION_KEYS: `k2:${k2}`, ENCRYPTION_KEY_CURRENT: 'k2' })).toEqual({ keys: { default: k1, k2 }, current: 'k2' });
    const issues = (env: Record<string, string>) => {
      const r = parseConfig(all, env);
      return r.ok ? [] : r.issues;
    };
    expect(issues({ ENCRYPTION_KEYS: `k1:${k1},k2:${k2}` })[0]).toMatch(/^ENCRYPTION_KEY_CURRENT: is required when several keys/);
    expect(issues({ ENCRYPTION_KEYS: `k1:${k1}`, ENCRYPTION_KEY_CURRENT: 'k9' })[0]).toMatch(/^ENCRYPTION_KEY_CURRENT: must be one of the configured key ids \(k1\)/);
    expect(issues({ ENCRYPTION_KEY: k1, ENCRYPTION_KEYS: `default:${k2}` })[0]).toMatch(/^ENCRYPTION_KEYS: names the id 'default'/);
    for (const bad of [`k1:${k1},k1:${k2}`, `k 1:${k1}`, 'k1:short-secret', k1]) {
      const found = issues({ ENCRYPTION_KEYS: bad });
      expect(found[0]).toMatch(/^ENCRYPTION_KEYS: .*\(value hidden\)$/);
      expect(found[0]).not.toContain('short-secret');
      expect(found[0]).not.toContain(k1);
    }
  });

  it('never echoes the userinfo of an invalid URL option, nor an unparseable URL option at all', () => {
    const r = parseConfig(all, {
      DATABASE_URL: 'mysql://flow:CANARY-PW1@db:3306/app',
      REDIS_URL: 'http://:CANARY-PW2@r:6379',
      LLM_BASE_URL: 'not a url CANARY-PW3@x',
      TOOL_FILES_ROOT: '',
      MAX_NODES_PER_DEFINITION: 'see postgres://u:CANARY-PW4@h/db',
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.issues.join('\n');
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'LLM_BASE_URL', 'MAX_NODES_PER_DEFINITION']) expect(text).toContain(`${name}:`);
    expect(text).not.toMatch(/CANARY/);
    expect(text).toContain('mysql://REDACTED@db:3306/app');
  });

  it('loadConfig prints every issue and exits 1 on invalid options', () => {
    const lines: string[] = [];
    let code: number | undefined;
    expect(() =>
      loadConfig(
        all,
        { SHARD_COUNT: '0', MAX_TOTAL_ATTEMPTS: '-1' },
        {
          print: (l) => lines.push(l),
          exit: (c) => {
            code = c;
            throw new Error('exited');
          },
        },
      ),
    ).toThrow('exited');
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(/SHARD_COUNT/);
    expect(lines.join('\n')).toMatch(/MAX_TOTAL_ATTEMPTS/);
  });

  it('describes every option with its default', () => {
    const lines = describeOptions(allOptions);
    expect(lines).toHaveLength(Object.keys(allOptions).length);
    expect(lines).toContain('DISPATCH_SWEEP_MS — due-run sweep interval, ms (floor 100) (default 500)');
    for (const l of lines) expect(l).toMatch(/^[A-Z_]+ — \S/);
  });
});
