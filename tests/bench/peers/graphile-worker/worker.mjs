// The graphile-worker child: one task `node` that runs a no-op, then adds its successor
// job(s) (the DAG executor); fan-in decrements a counter row and adds the join job in
// the same statement when it reaches zero. Reports finished chains/runs over IPC.
import { Logger, run } from 'graphile-worker';
import { childRecorder, onStop } from '../common.mjs';

const rec = childRecorder();
const concurrency = Number(process.env.PEER_CONCURRENCY ?? 24);
const batching = process.env.PEER_BATCHING === '1';
const W3_NEXT = { start: 'analyze', analyze: 'check', fanout: 'merge', merge: 'done', review: 'fanout', lookup: 'fanout' };

const taskList = {
  async node(p, helpers) {
    if (p.w === 'W1') {
      rec.mark(p.id, p.idx);
      if (p.idx < p.n - 1) await helpers.addJob('node', { w: 'W1', id: p.id, idx: p.idx + 1, n: p.n });
      else rec.done(p.id, true);
      return;
    }
    if (p.w === 'W2') {
      if (p.key === 'fanout') {
        await helpers.query('insert into bench_fanin (id, remaining) values ($1, $2)', [p.id, p.k]);
        await helpers.addJobs(Array.from({ length: p.k }, (_, i) => ({ identifier: 'node', payload: { w: 'W2', id: p.id, key: 'leaf', i } })));
      } else if (p.key === 'leaf') {
        await helpers.query(
          `with d as (update bench_fanin set remaining = remaining - 1 where id = $1 returning remaining)
           select graphile_worker.add_job('node', json_build_object('w', 'W2', 'id', $1::text, 'key', 'join')) from d where remaining = 0`,
          [p.id],
        );
      } else rec.done(p.id);
      return;
    }
    // W3: start → analyze → check → (review | lookup) → fanout → merge → done
    if (p.key === 'done') return rec.done(p.id);
    // review: the pause answered immediately (graphile-worker has no pause primitive).
    const next = p.key === 'check' ? (p.review ? 'review' : 'lookup') : W3_NEXT[p.key];
    await helpers.addJob('node', { ...p, key: next });
  },
};

// Per-task INFO logging costs CPU on every job: keep only warnings and errors.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`[graphile ${level}] ${message}\n`);
});

const runner = await run({
  logger,
  connectionString: process.env.PEER_DB_URL,
  concurrency,
  maxPoolSize: concurrency + 2,
  pollInterval: 2000,
  noHandleSignals: true,
  taskList,
  ...(batching ? { preset: { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0 } } } : {}),
});
onStop(async () => {
  await runner.stop();
});
process.send({ type: 'ready' });
