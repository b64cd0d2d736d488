import { describe, expect, it } from 'vitest';
import { parseConfig, parseConfigOrThrow } from './config';
import { z } from 'zod';
import { connectionOptions, coreOptions, defineConfig, hashTagOf, toCoreOptions } from './options';

const core = defineConfig(coreOptions);

describe('MAX_TEMPLATE_OUTPUT_BYTES and TEMPLATE_RENDER_LIMIT_MS', () => {
  it('default to 256 KiB and 500 ms and reach the planner', () => {
    const o = toCoreOptions(parseConfigOrThrow(core, {}));
    expect([o.maxTemplateOutputBytes, o.templateRenderLimitMs]).toEqual([262_144, 500]);
    const set = toCoreOptions(parseConfigOrThrow(core, { MAX_TEMPLATE_OUTPUT_BYTES: '4096', TEMPLATE_RENDER_LIMIT_MS: '50' }));
    expect([set.maxTemplateOutputBytes, set.templateRenderLimitMs]).toEqual([4096, 50]);
  });

  it('are refused at boot out of range or when not an integer, naming the option', () => {
    for (const [name, bad] of [['MAX_TEMPLATE_OUTPUT_BYTES', '100'], ['MAX_TEMPLATE_OUTPUT_BYTES', '99999999'], ['TEMPLATE_RENDER_LIMIT_MS', '5'], ['TEMPLATE_RENDER_LIMIT_MS', '1.5']] as const) {
      const r = parseConfig(core, { [name]: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map((i) => i.split(':')[0])).toEqual([name]);
    }
  });
});

describe('CANCEL_DRAIN_GRACE_MS', () => {
  it('defaults to 10 s and reaches the planner as cancelDrainGraceMs', () => {
    expect(toCoreOptions(parseConfigOrThrow(core, {})).cancelDrainGraceMs).toBe(10_000);
    expect(toCoreOptions(parseConfigOrThrow(core, { CANCEL_DRAIN_GRACE_MS: '1500' })).cancelDrainGraceMs).toBe(1_500);
  });

  it('is refused at boot below 100 ms, above a day, or when not an integer, naming the option', () => {
    for (const bad of ['50', '86400001', '1.5', 'soon']) {
      const r = parseConfig(core, { CANCEL_DRAIN_GRACE_MS: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map((i) => i.split(':')[0])).toEqual(['CANCEL_DRAIN_GRACE_MS']);
    }
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  const conn = defineConfig({ ...connectionOptions, QUEUE_PREFIX: z.string().min(1).default('{flowline}') });

  it('is unset (one Redis at REDIS_URL) by default and when empty', () => {
    expect(parseConfigOrThrow(conn, {}).REDIS_CLUSTER_NODES).toBeUndefined();
    expect(parseConfigOrThrow(conn, { REDIS_CLUSTER_NODES: ' , ' }).REDIS_CLUSTER_NODES).toBeUndefined();
  });

  it('parses host:port seeds, IPv6 in brackets included', () => {
    const cfg = parseConfigOrThrow(conn, { REDIS_CLUSTER_NODES: 'redis-0:7000, 10.0.0.2:7001,[::1]:7002' });
    expect(cfg.REDIS_CLUSTER_NODES).toEqual([
      { host: 'redis-0', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it('is refused at boot when an entry is not host:port, naming the option and the entry', () => {
    for (const bad of ['redis-0', 'redis-0:0', 'redis-0:70000', 'redis://redis-0:7000', 'a:1,b']) {
      const r = parseConfig(conn, { REDIS_CLUSTER_NODES: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map((i) => i.split(':')[0])).toEqual(['REDIS_CLUSTER_NODES']);
    }
  });

  it('refuses a QUEUE_PREFIX without a hash tag on a cluster, and allows it on one server', () => {
    const r = parseConfig(conn, { REDIS_CLUSTER_NODES: 'redis-0:7000', QUEUE_PREFIX: 'flowline' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.split(':')[0])).toEqual(['QUEUE_PREFIX']);
    expect(parseConfig(conn, { QUEUE_PREFIX: 'flowline' }).ok).toBe(true);
    expect(parseConfig(conn, { REDIS_CLUSTER_NODES: 'redis-0:7000', QUEUE_PREFIX: 'app:{fl}' }).ok).toBe(true);
  });
});

describe('hashTagOf', () => {
  it('reads the text between the first { and the next }, as Redis Cluster does', () => {
    expect(hashTagOf('{flowline}')).toBe('flowline');
    expect(hashTagOf('app:{fl}:{x}')).toBe('fl');
    expect(hashTagOf('{}flowline')).toBeNull();
    expect(hashTagOf('flowline')).toBeNull();
    expect(hashTagOf('{flowline')).toBeNull();
  });
});
