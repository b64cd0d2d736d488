import { describe, expect, it } from 'vitest';
import { AdmissionLedger, refusalError, type AdmissionOptions, type Refusal, type Ticket } from './admission';
import { edgeConfigSchema, toEdgeOptions } from './config';

const MiB = 1024 * 1024;
const OPTS: AdmissionOptions = {
  tenantWrites: 3,
  tenantWriteBytes: 2 * MiB,
  tenantReads: 2,
  replicaWrites: 5,
  replicaWriteBytes: 3 * MiB,
  replicaReads: 3,
  retryAfterSeconds: 2,
};

const admitted = (x: Ticket | Refusal): Ticket => {
  if (!('released' in x)) throw new Error(`refused by ${x.option}`);
  return x;
};
const refusedBy = (x: Ticket | Refusal | null): string | null => (x === null ? null : 'released' in x ? 'admitted' : x.option);

describe('AdmissionLedger', () => {
  it('refuses a tenant’s write past its request bound (429) and admits it again once one is released', () => {
    const l = new AdmissionLedger(OPTS);
    const held = [1, 2, 3].map(() => admitted(l.admit('a', 'write', 10)));
    expect(refusedBy(l.admit('a', 'write', 10))).toBe('ADMISSION_TENANT_WRITES');
    l.release(held[0]!);
    expect(refusedBy(l.admit('a', 'write', 10))).toBe('admitted');
  });

  it('weighs writes by their body: two 1 MiB bodies fill a 2 MiB tenant bound, a bodiless write still passes', () => {
    const l = new AdmissionLedger(OPTS);
    admitted(l.admit('a', 'write', MiB));
    admitted(l.admit('a', 'write', MiB));
    expect(refusedBy(l.admit('a', 'write', 1))).toBe('ADMISSION_TENANT_WRITE_BYTES');
    expect(refusedBy(l.admit('a', 'write', 0))).toBe('admitted');
    expect(l.load('a')).toEqual({ writes: 3, writeBytes: 2 * MiB, reads: 0 });
  });

  it('keeps reads on a budget of their own: a tenant with every write slot taken still reads, and another tenant’s writes never take its reads', () => {
    const l = new AdmissionLedger(OPTS);
    for (let i = 0; i < 3; i++) admitted(l.admit('a', 'write', 0));
    admitted(l.admit('b', 'write', 0));
    admitted(l.admit('b', 'write', 0));
    expect(refusedBy(l.admit('c', 'write', 0))).toBe('ADMISSION_REPLICA_WRITES');
    expect(refusedBy(l.admit('c', 'read', 0))).toBe('admitted');
    expect(refusedBy(l.admit('a', 'read', 0))).toBe('admitted');
    expect(refusedBy(l.admit('a', 'read', 0))).toBe('admitted');
    expect(refusedBy(l.admit('a', 'read', 0))).toBe('ADMISSION_TENANT_READS');
    expect(refusedBy(l.admit('b', 'read', 0))).toBe('ADMISSION_REPLICA_READS');
  });

  it('answers the tenant’s own bound before the replica’s, and the replica’s bytes across tenants (503)', () => {
    const l = new AdmissionLedger(OPTS);
    admitted(l.admit('a', 'write', 2 * MiB));
    expect(refusedBy(l.admit('a', 'write', MiB))).toBe('ADMISSION_TENANT_WRITE_BYTES');
    admitted(l.admit('b', 'write', MiB));
    const r = l.admit('c', 'write', 1);
    expect(refusedBy(r)).toBe('ADMISSION_REPLICA_WRITE_BYTES');
    const err = refusalError(r as Refusal, 2);
    expect({ status: err.status, code: err.code, retryAfter: err.retryAfterSeconds, details: err.details }).toEqual({
      status: 503,
      code: 'Overloaded',
      retryAfter: 2,
      details: [{ bound: 'ADMISSION_REPLICA_WRITE_BYTES', limit: 3 * MiB }],
    });
    const mine = refusalError(l.admit('a', 'write', MiB) as Refusal, 2);
    expect({ status: mine.status, code: mine.code }).toEqual({ status: 429, code: 'TooManyInFlight' });
  });

  it('counts a streamed body chunk by chunk, refuses the chunk that crosses a bound without counting it, and gives every byte back on release', () => {
    const l = new AdmissionLedger(OPTS);
    const t = admitted(l.admit('a', 'write', 0));
    expect(l.grow(t, MiB)).toBeNull();
    expect(l.grow(t, MiB)).toBeNull();
    expect(l.grow(t, 1)?.option).toBe('ADMISSION_TENANT_WRITE_BYTES');
    expect(l.load('a').writeBytes).toBe(2 * MiB);
    l.release(t);
    l.release(t);
    expect({ tenant: l.load('a'), replica: l.load() }).toEqual({ tenant: { writes: 0, writeBytes: 0, reads: 0 }, replica: { writes: 0, writeBytes: 0, reads: 0 } });
  });

  it('bounds nothing that is set to 0', () => {
    const l = new AdmissionLedger({ ...OPTS, tenantWrites: 0, tenantWriteBytes: 0, replicaWrites: 0, replicaWriteBytes: 0, tenantReads: 0, replicaReads: 0 });
    for (let i = 0; i < 100; i++) {
      admitted(l.admit('a', 'write', MiB));
      admitted(l.admit('a', 'read', 0));
    }
  });
});

describe('the admission options', () => {
  it('default to bounds a one-tenant client posting 64 at once passes, a 1 MiB body fits, reads are looser than writes', () => {
    const a = toEdgeOptions(edgeConfigSchema.parse({})).admission;
    expect(a.tenantWrites).toBeGreaterThanOrEqual(64);
    expect(a.tenantWriteBytes).toBeGreaterThanOrEqual(MiB);
    expect(a.replicaWriteBytes).toBeGreaterThanOrEqual(a.tenantWriteBytes);
    expect(a.tenantReads).toBeGreaterThan(a.tenantWrites);
    expect(a.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('refuse at boot a byte bound below the largest body, a replica bound below a tenant bound, and a negative or zero Retry-After', () => {
    for (const bad of [
      { ADMISSION_TENANT_WRITE_BYTES: String(MiB - 1) },
      { ADMISSION_REPLICA_WRITE_BYTES: '65536' },
      { ADMISSION_TENANT_WRITES: '10', ADMISSION_REPLICA_WRITES: '9' },
      { ADMISSION_TENANT_READS: '600', ADMISSION_REPLICA_READS: '512' },
      { ADMISSION_TENANT_WRITES: '-1' },
      { ADMISSION_RETRY_AFTER_S: '0' },
      { ADMISSION_REPLICA_READS: 'many' },
    ]) {
      const r = edgeConfigSchema.safeParse(bad);
      expect({ bad, ok: r.success, path: r.error?.issues[0]?.path[0] }).toEqual({ bad, ok: false, path: Object.keys(bad).at(-1) });
    }
    expect(edgeConfigSchema.safeParse({ ADMISSION_TENANT_WRITE_BYTES: '0', ADMISSION_REPLICA_WRITE_BYTES: '0' }).success).toBe(true);
  });
});
