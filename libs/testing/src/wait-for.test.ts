import { describe, expect, it } from 'vitest';
import { waitFor } from './wait-for';

describe('waitFor', () => {
  it('returns the first truthy value', async () => {
    let n = 0;
    const v = await waitFor(() => (++n >= 3 ? n : null), { intervalMs: 1 });
    expect(v).toBe(3);
  });

  it('keeps polling a throwing function and rethrows its last error on timeout', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('not yet');
        },
        { timeoutMs: 30, intervalMs: 5 },
      ),
    ).rejects.toThrow('not yet');
  });

  it('names what it waited for when it times out', async () => {
    await expect(
      waitFor(() => false, { timeoutMs: 20, intervalMs: 5, description: 'the run' }),
    ).rejects.toThrow(/timed out.*the run/);
  });
});
