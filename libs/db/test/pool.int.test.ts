import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, waitFor } from '@flowline/testing';
import { createPool } from '../src';

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
