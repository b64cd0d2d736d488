/**
 * W0 "bare BullMQ worker": the CPU a plain BullMQ Worker (bare-worker.mjs, its
 * own process, the lane's concurrency) spends per echo job, jobs added one after the other
 * as a W1 chain hands them over. The tool worker's CPU per W1 hop (one echo job each) is
 * compared with it in the same run: its target is ≤ 1.5× this figure.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { cpuMs } from './hop-cpu';

export interface BareWorkerFigure {
  jobs: number;
  /** CPU ms of the worker process per echo job (utime + stime) */
  cpuMsPerJob: number;
  concurrency: number;
}

const here = dirname(fileURLToPath(import.meta.url));

/** Runs `jobs` echo jobs one at a time through a bare worker process; null off Linux. */
export async function bareWorker(redisUrl: string, jobs: number, concurrency: number): Promise<BareWorkerFigure> {
  const prefix = `{bare-${Date.now()}}`;
  const child = spawn(process.execPath, [join(here, 'bare-worker.mjs'), redisUrl, prefix, String(concurrency)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => b.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`bare worker exited (${code})`)));
    });
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('echo', { connection: conn, prefix });
    const events = new QueueEvents('echo', { connection: conn.duplicate(), prefix });
    await events.waitUntilReady();
    const one = async (i: number) => {
      const job = await queue.add('echo', { runId: 'r', nodeKey: `n${i}`, invocationId: `inv-${i}`, result: { hello: 'world' } });
      await job.waitUntilFinished(events);
    };
    for (let i = 0; i < 20; i++) await one(i); // warm-up
    const groups = new Map([['bare', [child.pid!]]]);
    const before = cpuMs(groups).get('bare')!;
    for (let i = 0; i < jobs; i++) await one(i);
    const after = cpuMs(groups).get('bare')!;
    await events.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    conn.disconnect();
    return { jobs, cpuMsPerJob: (after - before) / jobs, concurrency };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 3000))]);
  }
}
