// Queue naming and the W3 continuation flow, shared by run.mjs and worker.mjs.
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Unique per bench invocation; hash-tagged so it would also work on Redis Cluster. */
export const prefix = (token) => `{peerbench-bullmq-${token}}`;
export const QUEUE = 'nodes';

export function connection() {
  const u = new URL(REDIS_URL);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    maxRetriesPerRequest: null,
  };
}

export const JOB_OPTS = { removeOnComplete: true, removeOnFail: true };

/** A FlowProducer chain: keys[0] runs first, the last key is the root (runs last). */
export function chainFlow(keys, dataOf) {
  let node;
  for (let i = 0; i < keys.length; i++) {
    const cur = { name: keys[i], queueName: QUEUE, data: dataOf(keys[i], i), opts: JOB_OPTS };
    if (node) cur.children = [node];
    node = cur;
  }
  return node;
}
