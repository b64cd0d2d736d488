// W0 "shape floor", the owner half: in a process of its own, it receives the
// worker's report on its channel, commits the node's completion and the next node's queueing
// in ONE Postgres statement (autocommit: one transaction, as a tick commits a hop), then adds
// the next node's BullMQ job — what a dispatcher must at least do per node. When a chain's
// last node is reported it publishes the chain's report arrival times on `done`.
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const [pgUrl, redisUrl, prefix, channel] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: pgUrl, max: 8 });
const queue = new Queue('hops', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix });
const publisher = new Redis(redisUrl, { maxRetriesPerRequest: null });
const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
const arrivals = new Map();

async function onReport({ chain, hop, last }) {
  const seen = arrivals.get(chain) ?? [];
  seen.push(performance.now());
  arrivals.set(chain, seen);
  await pool.query(
    `update shape_nodes set status = case when hop = $2 then 'Succeeded' else 'Queued' end
      where chain = $1 and hop in ($2, $2 + 1)`,
    [chain, hop],
  );
  if (hop < last) await queue.add('hop', { chain, hop: hop + 1, last }, { removeOnComplete: true });
  else {
    arrivals.delete(chain);
    await publisher.publish(`${channel}:done`, JSON.stringify({ chain, arrivals: seen }));
  }
}

subscriber.on('message', (_ch, raw) => {
  onReport(JSON.parse(raw)).catch((err) => {
    process.stderr.write(`shape owner: ${err.message}\n`);
    process.exit(1);
  });
});
await subscriber.subscribe(channel);
await queue.waitUntilReady();
// every connection the pool may use is opened now, so the bench counts its server process
await Promise.all(Array.from({ length: 8 }, () => pool.query('select pg_sleep(0.01)')));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  subscriber.disconnect();
  void Promise.all([queue.close(), pool.end()]).then(() => process.exit(0));
});
