import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shardOfRun } from '@flowline/db';
import { runShard } from '@flowline/queue';

describe('the run shard a wake is routed by', () => {
  it('is the shard the store assigns the run (libs/db shardOfRun, the SQL flowline_shard_of)', () => {
    for (const count of [1, 2, 8, 16, 64, 4096]) {
      for (let i = 0; i < 500; i++) {
        const id = randomUUID();
        expect(runShard(id, count)).toBe(shardOfRun(id, count));
      }
    }
  });
});
