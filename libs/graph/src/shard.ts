/**
 * The run's dispatcher shard: FNV-1a (32-bit) of the run id modulo the shard count. The store
 * assigns a run its shard with it (and the SQL `flowline_shard_of` computes the same;
 * libs/db's run-apply test holds the two together), and workers and the API route a run's
 * wake to its shard owner's channel with it, without knowing who that is.
 */
export function shardOfRun(runId: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) {
    h ^= runId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}
