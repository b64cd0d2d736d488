import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, waitFor } from '@flowline/testing';
import { createPool, PoolTimeoutError } from '../src';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('createPool', () => {
  it('survives the server terminating a checked-out client between statements', async () => {
    const seen: string[] = [];
    const pool = createPool(db.url, { onIdleError: (err) => seen.push((err as Error).message) });
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await db.pool.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    // Without a listener on checked-out clients this error is unhandled and kills the process.
    await waitFor(() => seen.length > 0, { timeoutMs: 5_000, description: 'termination reported' });
    await expect(client.query('select 1')).rejects.toThrow();
    client.release(true);
    expect((await pool.query('select 1 as one')).rows[0]).toEqual({ one: 1 });
    await pool.end();
  });
});

describe('an acquire timeout', () => {
  it('is a PoolTimeoutError (code PoolTimeout) from connect() and from query(), and the pool serves again once a client is free', async () => {
    const pool = createPool(db.url, { max: 1, connectionTimeoutMs: 200 });
    const held = await pool.connect();
    try {
      for (const attempt of [() => pool.connect(), () => pool.query('select 1')]) {
        const err = await attempt().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(PoolTimeoutError);
        expect({ code: (err as PoolTimeoutError).code, timeoutMs: (err as PoolTimeoutError).timeoutMs }).toEqual({ code: 'PoolTimeout', timeoutMs: 200 });
        // the cause is pg-pool's own error: a pg-pool that renames it fails here, not in production
        expect(((err as Error).cause as Error).message).toBe('timeout exceeded when trying to connect');
      }
    } finally {
      held.release();
    }
    expect((await pool.query('select 1 as one')).rows[0]).toEqual({ one: 1 });
    await pool.end();
  });

  it('leaves every other connect error as it was', async () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/postgres', { max: 1, connectionTimeoutMs: 2_000 });
    const err = await pool.query('select 1').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(PoolTimeoutError);
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    await pool.end();
  });
});
