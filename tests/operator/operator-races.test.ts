/**
 * Operator verbs racing the dispatchers, against the whole cluster as real processes
 * (API, two dispatchers, one tool worker; real Postgres and Redis).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { waitFor, nodeOf, startE2eCluster, type E2eCluster } from '@flowline/testing';

const FAN = 55;
const STEPS = 50;

let c: E2eCluster;
beforeAll(async () => {
  c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { MAX_TOTAL_ATTEMPTS: '200' } });
}, 120_000);
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
});
afterAll(async () => {
  await c?.close();
});


/** Start → Pause `gate` → FAN echo Tools → End joining them all. */
function fanGraph() {
  const fan = Array.from({ length: FAN }, (_, i) => `n${String(i).padStart(2, '0')}`);
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'gate', kind: 'Pause', config: { prompt: 'go?', allowedDecisions: ['Approve'] } },
      ...fan.map((key) => ({ key, kind: 'Tool', config: { toolName: 'echo', arguments: { key } } })),
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e0', from: 'start', to: 'gate' },
      ...fan.map((key) => ({ key: `g-${key}`, from: 'gate', to: key })),
      ...fan.map((key) => ({ key: `${key}-end`, from: key, to: 'end' })),
    ],
  };
}

describe('step one under concurrency', () => {
  it('50 concurrent step-one calls on a paused run admit exactly one node per granted allowance, each once', async () => {
    const defId = await c.api.createDefinition('fan', fanGraph());
    const runId = await c.api.startRun(defId, {});
    await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'gate waiting');
    expect((await c.api.send('POST', `/v1/runs/${runId}/pause`)).status).toBe(202);
    await c.api.decide(runId, 'gate', 'Approve');
    await c.api.waitForRun(runId, (v) => nodeOf(v, 'gate')?.status === 'Succeeded', 30_000, 'gate decided');
    const fanNodes = (v: Awaited<ReturnType<typeof c.api.getRun>>) => v.nodeRuns.filter((n) => /^n\d\d$/.test(n.nodeKey));
    expect(fanNodes(await c.api.getRun(runId)).every((n) => n.status === 'Pending')).toBe(true);

    const answers = await Promise.all(Array.from({ length: STEPS }, () => c.api.send('POST', `/v1/runs/${runId}/step`, { mode: 'one' })));
    expect(answers.map((a) => a.status)).toEqual(Array(STEPS).fill(202));
    const grants = new Set(answers.map((a) => a.body.stepId as string));
    expect(answers.filter((a) => !a.body.coalesced).length).toBe(grants.size);

    // every grant is consumed, and exactly that many fan nodes left Pending
    await waitFor(
      async () => {
        const r = await c.db.pool.query(`SELECT step_allowance FROM runs WHERE id = $1`, [runId]);
        const v = await c.api.getRun(runId);
        return r.rows[0].step_allowance === null && fanNodes(v).filter((n) => n.status === 'Succeeded').length === grants.size;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: 'allowances consumed and their nodes done' },
    );
    const v = await c.api.getRun(runId);
    const admitted = fanNodes(v).filter((n) => n.status !== 'Pending');
    expect(admitted).toHaveLength(grants.size);
    expect(admitted.every((n) => n.status === 'Succeeded' && n.attempt === 1)).toBe(true);
    const queued = (await c.api.events(runId)).filter((e) => e.kind === 'node.queued' && /^n\d\d$/.test(e.nodeKey ?? ''));
    expect(queued).toHaveLength(grants.size);

    // resuming releases the rest and the run completes with every node run once
    expect((await c.api.send('POST', `/v1/runs/${runId}/resume`)).status).toBe(202);
    const done = await c.api.waitForRun(runId, (x) => x.run.status === 'Completed', 60_000, 'run completed');
    expect(fanNodes(done).every((n) => n.attempt === 1)).toBe(true);
  }, 150_000);
});

/**
 * Start → Tool `slow` (wait) → Tool `b` echoing two members of its input document's `input`
 * → End. The edits replace `input` with an envelope (the shape a single predecessor gives).
 */
function editGraph(ms: number) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms } } },
      { key: 'b', kind: 'Tool', config: { toolName: 'echo', argumentBindings: { v: 'input.output.v', w: 'input.output.w' } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'slow' },
      { key: 'e2', from: 'slow', to: 'b' },
      { key: 'e3', from: 'b', to: 'end' },
    ],
  };
}

describe('edit input racing admission', () => {
  it('runs the node with the last accepted edit, never a refused, half-applied or reverted one', async () => {
    const defId = await c.api.createDefinition('edit', editGraph(400));
    const trial = async () => {
      const runId = await c.api.startRun(defId, {});
      const envelope = (n: number) => ({ status: 'succeeded', attempt: 1, branch: null, output: { v: n, w: n } });
      let lastAccepted: number | null = null;
      let refused = false;
      for (let i = 1; i <= 2000 && !refused; i++) {
        const r = await c.api.send('PUT', `/v1/runs/${runId}/nodes/b/input`, { input: envelope(i) });
        if (r.status === 200) lastAccepted = i;
        else {
          expect([r.status, r.body.error.code]).toEqual([409, 'NodeStateConflict']);
          refused = true;
        }
      }
      expect(refused).toBe(true);
      const after = await c.api.send('PUT', `/v1/runs/${runId}/nodes/b/input`, { input: envelope(-1) });
      expect(after.status).toBe(409);
      await c.api.waitForRun(runId, (v) => v.run.status === 'Completed', 60_000, 'run completed');
      const b = await c.api.send('GET', `/v1/runs/${runId}/nodes/b`);
      expect(lastAccepted).not.toBeNull();
      expect(b.body.input.input).toEqual(envelope(lastAccepted!));
      expect(b.body.output.output.result).toEqual({ v: lastAccepted, w: lastAccepted });
    };
    await Promise.all([trial(), trial(), trial(), trial()]);
  }, 150_000);
});

describe('decide racing cancel', () => {
  it('ends in one consistent state with gate.decided (when accepted) before run.cancelled', async () => {
    const defId = await c.api.createDefinition('gate', {
      nodes: [
        { key: 'start', kind: 'Start' },
        { key: 'gate', kind: 'Pause', config: { prompt: 'ok?', allowedDecisions: ['Approve', 'Reject'] } },
        { key: 'end', kind: 'End', config: { outcome: 'done' } },
      ],
      edges: [
        { key: 'e1', from: 'start', to: 'gate' },
        { key: 'e2', from: 'gate', to: 'end' },
      ],
    });
    const trial = async () => {
      const runId = await c.api.startRun(defId, {});
      await c.api.waitForRun(runId, (v) => v.run.status === 'WaitingForApproval', 30_000, 'gate waiting');
      const [decided, cancelled] = await Promise.all([
        c.api.send('POST', `/v1/runs/${runId}/nodes/gate/decide`, { operationId: randomUUID(), decision: 'Approve' }),
        c.api.send('POST', `/v1/runs/${runId}/cancel`, {}),
      ]);
      expect(cancelled.status).toBe(202);
      const end = await c.api.waitForRun(runId, (v) => ['Completed', 'Cancelled'].includes(v.run.status), 30_000, 'run ended');
      const events = await c.api.events(runId);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const kinds = events.map((e) => e.kind);
      const gate = nodeOf(end, 'gate');
      if (decided.status === 202) {
        expect(kinds.filter((k) => k === 'gate.decided')).toHaveLength(1);
        expect(gate?.status).toBe('Succeeded');
        if (end.run.status === 'Cancelled') {
          expect(kinds.indexOf('gate.decided')).toBeLessThan(kinds.indexOf('run.cancelled'));
          expect(nodeOf(end, 'end')?.status).not.toBe('Succeeded');
        } else {
          expect(kinds).not.toContain('run.cancelled');
          expect(kinds.at(-1)).toBe('run.completed');
        }
      } else {
        expect([decided.status, decided.body.error.code]).toEqual([409, 'NodeStateConflict']);
        expect(kinds).not.toContain('gate.decided');
        expect(gate?.status).toBe('Cancelled');
        expect(end.run.status).toBe('Cancelled');
      }
      if (end.run.status === 'Cancelled') expect(kinds.at(-1)).toBe('run.cancelled');
      return { decided: decided.status, run: end.run.status };
    };
    const outcomes = await Promise.all(Array.from({ length: 6 }, trial));
    expect(outcomes).toHaveLength(6);
  }, 150_000);
});

/**
 * Start → Tool `slow` (wait) → Tool `target` (echo) → End: edge `e2` leaves `slow`, so its
 * overrides are written while its source is Running.
 */
function overrideGraph(ms: number) {
  return {
    nodes: [
      { key: 'start', kind: 'Start' },
      { key: 'slow', kind: 'Tool', config: { toolName: 'wait', arguments: { ms } } },
      { key: 'target', kind: 'Tool', config: { toolName: 'echo', arguments: { ok: true } } },
      { key: 'end', kind: 'End', config: { outcome: 'done' } },
    ],
    edges: [
      { key: 'e1', from: 'start', to: 'slow' },
      { key: 'e2', from: 'slow', to: 'target' },
      { key: 'e3', from: 'target', to: 'end' },
    ],
  };
}

describe('edge overrides written in quick succession', () => {
  const REPETITIONS = 50;
  /** each sequence of verdicts is written back to back while `slow` runs */
  const sequences: Array<{ name: string; writes: Array<boolean | null> }> = [
    { name: 'set then clear', writes: [false, null] },
    { name: 'clear then set', writes: [true, null, false] },
    { name: 'three alternating writes', writes: [false, true, false] },
    { name: 'three alternating writes ending cleared', writes: [true, false, null] },
  ];

  it.each(sequences)('the final state equals the last write: $name, $writes, 50 runs across two dispatchers', async ({ writes }) => {
    const defId = await c.api.createDefinition('override', overrideGraph(2500));
    const last = writes.at(-1)!;
    const trial = async () => {
      const runId = await c.api.startRun(defId, {});
      await c.api.waitForRun(runId, (v) => nodeOf(v, 'slow')?.status === 'Running', 30_000, 'slow running');
      for (const verdict of writes) {
        const r = await c.api.send('PUT', `/v1/runs/${runId}/edges/e2/override`, { verdict });
        expect([r.status, r.body]).toEqual([200, { edgeKey: 'e2', verdict }]);
      }
      const end = await c.api.waitForRun(runId, (v) => ['Completed', 'Failed', 'Cancelled'].includes(v.run.status), 30_000, 'run ended');
      // the premise: every write landed while `slow` was still running (2.5 s leaves room on a loaded host)
      const events = await c.api.events(runId);
      const lastWrite = Math.max(...events.filter((e) => e.kind === 'node.overridden').map((e) => e.seq));
      const slowDone = events.find((e) => e.kind === 'node.completed' && e.nodeKey === 'slow')?.seq;
      expect(slowDone).toBeGreaterThan(lastWrite);
      const controls = await c.db.pool.query<{ edge_overrides: Record<string, boolean> }>(`SELECT edge_overrides FROM runs WHERE id = $1`, [runId]);
      return { runId, target: nodeOf(end, 'target')?.status, run: end.run.status, standing: controls.rows[0]!.edge_overrides['e2'] ?? null };
    };
    const outcomes = [];
    for (let i = 0; i < REPETITIONS; i += 10) outcomes.push(...(await Promise.all(Array.from({ length: 10 }, trial))));
    const expected = last === false ? { target: 'Skipped', run: 'Cancelled', standing: false } : { target: 'Succeeded', run: 'Completed', standing: last };
    const wrong = outcomes.filter((o) => o.target !== expected.target || o.run !== expected.run || o.standing !== expected.standing);
    expect(wrong).toEqual([]);
  }, 300_000);
});
