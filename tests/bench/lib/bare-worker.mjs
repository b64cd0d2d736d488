// W0 reference: a bare BullMQ Worker in a process of its own, echoing its job's
// data as the return value; nothing else runs in it. The bench reads this process's CPU
// time per job (/proc) to set the floor the tool worker's CPU per echo job is judged by.
import process from 'node:process';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const [redisUrl, prefix, concurrency] = process.argv.slice(2);
const worker = new Worker('echo', async (job) => job.data, {
  connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
  prefix,
  concurrency: Number(concurrency),
});
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
