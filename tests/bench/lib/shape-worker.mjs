// W0 "shape floor", the worker half: a plain BullMQ Worker in a process of its own
// that returns its job's data and, once BullMQ stored the result (the `completed` event, after
// moveToFinished), publishes a report naming the job on the owner's channel — what a lane
// worker must at least do per node. Nothing else runs in it.
import process from 'node:process';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [redisUrl, prefix, channel, concurrency] = process.argv.slice(2);
const publisher = new Redis(redisUrl, { maxRetriesPerRequest: null });
const worker = new Worker('hops', async (job) => job.data, {
  connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
  prefix,
  concurrency: Number(concurrency),
});
worker.on('completed', (job) => void publisher.publish(channel, JSON.stringify(job.data)));
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
