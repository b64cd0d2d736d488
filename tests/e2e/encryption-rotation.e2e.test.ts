/**
 * Rotating the at-rest encryption key on a whole cluster (API, two dispatchers, a tool worker):
 * a store sealed with key `old` — values written straight into it (100,000 in the full trial), and the values a
 * cluster writes itself (graphs, run inputs and outputs, node documents, signals, waits, events,
 * webhook secrets and bodies) — is moved to key `new` by the dispatchers' re-seal while runs
 * go on and are read; then `old` can be removed. Removing it before the re-seal is done is
 * refused at boot.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureEncryptionKeys, createPool, sealJsonText, staleValueCount, type Pool } from '@flowline/db';
import { REPO_ROOT, spawnService, startE2eCluster, waitFor, type E2eCluster } from '@flowline/testing';

/**
 * Values written straight into the store under the old key (half run inputs, half node outputs).
 * The acceptance figure is 100,000 (`ROTATION_SEALED_ROWS=100000`, about two minutes on a shared
 * 2-core machine); 25,000 keeps this file near a minute in CI.
 */
const SEALED_ROWS = Number(process.env.ROTATION_SEALED_ROWS ?? 25_000);
const OLD = randomBytes(32).toString('hex');
const NEW = randomBytes(32).toString('hex');
const OLD_ONLY = { ENCRYPTION_KEYS: `old:${OLD}` };
const BOTH = { ENCRYPTION_KEYS: `old:${OLD},new:${NEW}`, ENCRYPTION_KEY_CURRENT: 'new' };
const NEW_ONLY = { ENCRYPTION_KEYS: `new:${NEW}` };

const echoGraph = {
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'say', kind: 'Tool', config: { toolName: 'echo', arguments: { said: 'hi' } } },
    { key: 'end', kind: 'End', config: { outcome: 'done', resultPath: 'input.output' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'say' },
    { key: 'e2', from: 'say', to: 'end' },
  ],
};

const signalGraph = {
  signals: { review: {} },
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'await', kind: 'Wait', config: { signal: 'review' } },
    { key: 'end', kind: 'End', config: { outcome: 'signalled', resultPath: 'input.output' } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'await' },
    { key: 'e2', from: 'await', to: 'end' },
  ],
};

describe('rotating ENCRYPTION_KEY on a whole cluster', () => {
  let c: E2eCluster;
  let pool: Pool;

  beforeAll(async () => {
    c = await startE2eCluster({ dispatchers: 2, toolWorkers: 1, env: { ...OLD_ONLY, ENCRYPTION_RESEAL_INTERVAL_MS: '500', MAX_CONCURRENT_RUNS: '1000' } });
    pool = createPool(c.db.url);
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-80).join('\n')}\n`);
  });

  afterAll(async () => {
    configureEncryptionKeys(null);
    await pool?.end();
    await c?.close();
  });

  /** Restarts every process with `env` on top of its own, and waits for the API. */
  async function restartAll(env: Record<string, string>): Promise<void> {
    for (const [label, p] of [...c.cluster.processes]) {
      await c.cluster.kill(label, 'SIGTERM');
      c.cluster.launch({ ...p.spec, env: { ...p.spec.env, ...env } });
    }
    await waitFor(async () => (await fetch(`${c.cluster.apiUrl}/readyz`).catch(() => null))?.status === 200, { timeoutMs: 60_000, intervalMs: 200, description: 'API ready after restart' });
  }

  it(`moves ${SEALED_ROWS.toLocaleString('en')} sealed values and everything a cluster wrote to the new key while runs go on, then the old key can go`, async () => {
    // what the cluster seals itself under `old`
    const echo = await c.api.createDefinition('echo', echoGraph);
    const signalled = await c.api.createDefinition('signalled', signalGraph);
    const before: string[] = [];
    for (let i = 0; i < 5; i++) before.push(await c.api.startRun(echo, { secretInput: `before-${i}` }));
    const waiting = await c.api.startRun(signalled, { who: 'waiting' });
    expect((await c.api.send('POST', `/v1/runs/${waiting}/signals`, { channel: 'other', payload: {}, requestId: randomUUID() })).status).toBe(404);
    const hook = await c.api.send('POST', '/v1/webhooks', { slug: 'rotate', target: { definitionId: echo }, auth: { type: 'bearer' } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const delivered = await fetch(new URL(new URL(hook.body.url).pathname, c.cluster.apiUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${hook.body.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'hook' }),
    });
    expect(delivered.status).toBe(202);
    expect((await c.api.send('POST', '/v1/events', [{ name: 'rotation.test', data: { sealed: true } }])).status).toBe(202);
    for (const id of before) await c.api.waitForRun(id, (v) => v.run.status === 'Completed', 30_000, 'echo run completed');
    /** reads a run the cluster sealed: its output, and its echo node's input holding the run's input */
    const readBefore = async (i: number): Promise<string[]> => {
      const run = await c.api.send('GET', `/v1/runs/${before[i]}`);
      const node = await c.api.send('GET', `/v1/runs/${before[i]}/nodes/say`);
      const ok = run.status === 200 && run.body.output?.outcome === 'done' && node.status === 200 && JSON.stringify(node.body.input).includes(`before-${i}`);
      return ok ? [] : [`GET run ${before[i]}: ${run.status} ${JSON.stringify(run.body.output)} / ${node.status} ${JSON.stringify(node.body.input)}`];
    };
    expect(await readBefore(0)).toEqual([]);

    // 100,000 values sealed with `old` as the store seals them (a run's input, a node's output)
    configureEncryptionKeys({ keys: { old: OLD }, current: 'old' });
    /** a sample of the written runs → the n sealed into them */
    const bulk: Array<[string, number]> = [];
    for (let i = 0; i < SEALED_ROWS / 2; i += 5000) {
      const ids = Array.from({ length: Math.min(5000, SEALED_ROWS / 2 - i) }, () => randomUUID());
      bulk.push(...ids.slice(0, 20).map((id, j) => [id, i + j] as [string, number]));
      const inputs = ids.map((id, j) => sealJsonText(JSON.stringify({ n: i + j }), { table: 'runs', column: 'input', row: id }));
      const outputs = ids.map((id, j) => sealJsonText(JSON.stringify({ out: i + j }), { table: 'node_runs', column: 'output', row: `${id}/say` }));
      await pool.query(
        `INSERT INTO runs (id, tenant_id, definition_id, definition_version, graph, plan_graph, graph_hash, status, shard, last_seq, input, created_at, started_at, finished_at)
         SELECT id, 'default', $3::uuid, 1, '{}', '{}', 'h', 'Completed', 0, 0, input::jsonb, now(), now(), now()
           FROM unnest($1::uuid[], $2::text[]) AS t(id, input)`,
        [ids, inputs, echo],
      );
      await pool.query(
        `INSERT INTO node_runs (run_id, node_key, kind, status, attempt_limit, output)
         SELECT id, 'say', 'Tool', 'Succeeded', 1, output::jsonb FROM unnest($1::uuid[], $2::text[]) AS t(id, output)`,
        [ids, outputs],
      );
    }
    const registered = await pool.query<{ id: string }>('SELECT id FROM encryption_keys ORDER BY id');
    expect(registered.rows.map((r) => r.id)).toEqual(['old']);
    const staleBefore = await staleValueCount(pool, 'new');
    expect(staleBefore).toBeGreaterThanOrEqual(SEALED_ROWS);

    // a process configured without `old` refuses to boot while values still use it
    const early = await spawnService({
      cwd: join(REPO_ROOT, 'services', 'dispatcher'),
      env: { DATABASE_URL: c.db.url, REDIS_URL: c.redisUrl, QUEUE_PREFIX: c.queuePrefix, DISPATCHER_ID: 'early', ...NEW_ONLY },
      readyText: null,
    });
    const earlyExit = await Promise.race([early.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 60_000))]);
    if (earlyExit === 'still running') early.child.kill('SIGKILL');
    expect(earlyExit).toBe(1);
    expect(early.output()).toContain("'old'");
    expect(early.output()).toContain('EncryptionKeyMissing');

    // `new` becomes current; the dispatchers re-seal while runs start, finish and are read
    await restartAll(BOTH);
    configureEncryptionKeys({ keys: { old: OLD, new: NEW }, current: 'new' });
    let stop = false;
    const failures: string[] = [];
    const started: string[] = [];
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        started.push(await c.api.startRun(echo, { during: i }));
        const [id, n] = bulk[i % bulk.length]!;
        const read = await c.api.send('GET', `/v1/runs/${id}/nodes/say`);
        if (read.status !== 200 || read.body.output?.out !== n) failures.push(`GET written node ${read.status} ${JSON.stringify(read.body)}`);
        failures.push(...(await readBefore(i % before.length)));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    await waitFor(async () => (await pool.query(`SELECT retired_at IS NOT NULL AS retired FROM encryption_keys WHERE id = 'old'`)).rows[0]?.retired === true, {
      timeoutMs: 240_000,
      intervalMs: 500,
      description: 'the old key retired by the re-seal',
    });
    stop = true;
    await traffic;
    expect(failures).toEqual([]);
    expect(await staleValueCount(pool, 'new')).toBe(0);
    // every sealed value names the new key
    const kids = await pool.query<{ kid: string | null; n: string }>(`SELECT input->>'kid' AS kid, count(*)::text AS n FROM runs WHERE input ? '$enc' GROUP BY 1`);
    expect(kids.rows.map((r) => r.kid)).toEqual(['new']);
    for (const id of started.slice(-5)) await c.api.waitForRun(id, (v) => v.run.status === 'Completed', 30_000, 'run started during the re-seal completed');

    // `old` removed: every process boots, and what it sealed reads back
    await restartAll(NEW_ONLY);
    configureEncryptionKeys({ keys: { new: NEW }, current: 'new' });
    for (let i = 0; i < before.length; i++) expect(await readBefore(i)).toEqual([]);
    expect((await c.api.send('GET', `/v1/runs/${bulk[3]![0]}/nodes/say`)).body.output).toEqual({ out: 3 });
    const graph = await c.api.send('GET', `/v1/definitions/${echo}`);
    expect(graph.status).toBe(200);
    expect(graph.body.graph.nodes).toHaveLength(3);
    const deliveries = await c.api.send('GET', `/v1/webhooks/${hook.body.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    // the waiting run still takes its signal, and the webhook's secret still verifies
    expect((await c.api.send('POST', `/v1/runs/${waiting}/signals`, { channel: 'review', payload: { ok: 1 }, requestId: randomUUID() })).status).toBe(202);
    await c.api.waitForRun(waiting, (v) => v.run.status === 'Completed', 30_000, 'signalled run completed');
    const again = await fetch(new URL(new URL(hook.body.url).pathname, c.cluster.apiUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${hook.body.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'hook', again: true }),
    });
    expect(again.status).toBe(202);
  }, 420_000);
});
