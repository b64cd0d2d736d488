// The BullMQ worker child: a no-op processor; marks node starts (W1), reports finished
// chains/runs to the parent over IPC, and for W3 adds the branch continuation from the
// `check` node (the condition is decided at run time, as in the canonical graph).
import { Worker, FlowProducer } from 'bullmq';
import { childRecorder, onStop } from '../common.mjs';
import { QUEUE, chainFlow, connection, prefix } from './shared.mjs';

const pfx = prefix(process.env.PEER_TOKEN);
const concurrency = Number(process.env.PEER_CONCURRENCY ?? 100);
const rec = childRecorder();
const flow = new FlowProducer({ connection: connection(), prefix: pfx });

const worker = new Worker(
  QUEUE,
  async (job) => {
    const d = job.data;
    if (d.w === 'W1') {
      rec.mark(d.id, d.idx);
      if (d.last) rec.done(d.id, true);
      return null;
    }
    if (d.w === 'W2') {
      if (d.last) rec.done(d.id);
      return null;
    }
    // W3: start → analyze → check → (review | lookup) → fanout → merge → done
    if (job.name === 'check') {
      const branch = d.review ? 'review' : 'lookup';
      await flow.add(chainFlow([branch, 'fanout', 'merge', 'done'], () => ({ w: 'W3', id: d.id })));
    } else if (job.name === 'review') {
      // The pause, answered immediately: BullMQ has no pause primitive, so the answer is
      // the job itself completing.
      return { decision: 'Approve' };
    } else if (job.name === 'done') rec.done(d.id);
    return null;
  },
  { connection: connection(), prefix: pfx, concurrency },
);
worker.on('error', (e) => process.stderr.write(`worker error ${e}\n`));
await worker.waitUntilReady();
onStop(async () => {
  await worker.close();
  await flow.close();
});
process.send({ type: 'ready' });
