// The DBOS worker child: launches DBOS on bench_dbos, registers the workflows and the
// queues, and reports finished chains/runs over IPC. Nodes are DBOS steps (one
// checkpoint each); fan-out enqueues child workflows on a queue.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { childRecorder, onStop } from '../common.mjs';

const rec = childRecorder();
const POLL_MS = Number(process.env.PEER_POLL_MS ?? 10);
const noop = async () => null;

async function chain(id, n) {
  for (let i = 0; i < n; i++) {
    await DBOS.runStep(async () => { rec.mark(id, i); return null; }, { name: `n${i}` });
  }
  rec.done(id, true);
}
const chainWf = DBOS.registerWorkflow(chain, { name: 'chain' });

async function leaf() {
  await DBOS.runStep(noop, { name: 'leaf' });
}
const leafWf = DBOS.registerWorkflow(leaf, { name: 'leaf' });

async function fan(id, k) {
  await DBOS.runStep(noop, { name: 'fanout' });
  // startWorkflow assigns the child's step id synchronously, so the K enqueues may overlap.
  const handles = await Promise.all(Array.from({ length: k }, () => DBOS.startWorkflow(leafWf, { queueName: 'fan' })()));
  // Queued children are awaited through the database: poll as often as the queue does.
  await DBOS.waitAll(handles, { pollingIntervalMs: POLL_MS });
  await DBOS.runStep(async () => { rec.done(id); return null; }, { name: 'join' });
}
DBOS.registerWorkflow(fan, { name: 'fan' });

// The canonical shape: start → analyze → check → (review | lookup) → fanout → merge → done.
async function canonical(id, review) {
  await DBOS.runStep(noop, { name: 'start' });
  await DBOS.runStep(noop, { name: 'analyze' });
  const branch = await DBOS.runStep(async () => review, { name: 'check' });
  if (branch) {
    // The pause: a durable receive; the bench sends the decision right after enqueue.
    const decision = await DBOS.recv('decision', 60);
    if (decision !== 'Approve') throw new Error(`review got ${decision}`);
  } else await DBOS.runStep(noop, { name: 'lookup' });
  await DBOS.runStep(noop, { name: 'fanout' });
  await DBOS.runStep(noop, { name: 'merge' });
  await DBOS.runStep(async () => { rec.done(id); return null; }, { name: 'done' });
}
DBOS.registerWorkflow(canonical, { name: 'canonical' });
void chainWf;

DBOS.setConfig({
  name: 'flowline-bench',
  systemDatabaseUrl: process.env.PEER_DB_URL,
  systemDatabasePoolSize: 20,
  logLevel: 'warn',
});
await DBOS.launch();
await DBOS.registerQueue('bench', { minPollingIntervalMs: POLL_MS });
await DBOS.registerQueue('fan', { minPollingIntervalMs: POLL_MS });
onStop(async () => {
  await DBOS.shutdown();
});
process.send({ type: 'ready' });
