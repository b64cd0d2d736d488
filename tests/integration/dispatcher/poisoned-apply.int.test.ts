/**
 * Runs the store cannot take (issue #12 item 2): a worker document Postgres cannot keep fails
 * its node in the planner before any commit, and a run whose tick the store keeps refusing is
 * quarantined after APPLY_FAILURE_LIMIT tries — never retried by every sweep forever — while
 * the other runs of its batch complete. The refusals are real: a local HTTP server serving
 * U+0000 and a lone surrogate to `http_fetch`, and Postgres triggers of this test's database
 * refusing one run's writes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCancel } from '@flowline/db';
import type { Graph } from '@flowline/graph';
import { publishWake } from '@flowline/queue';
import { waitFor } from '@flowline/testing';
import type { Dispatcher } from '../../../services/dispatcher/src/dispatcher';
import { createHarness, edge, node, runStatuses, TENANT, toolChain, type Harness } from '../../../services/dispatcher/test/harness';
import { startToolWorker } from '../tool-worker';

const LIMIT = 3;

let h: Harness;
let d: Dispatcher;
let stopWorker: () => Promise<void>;
let server: Server;
let base: string;

beforeAll(async () => {
  h = await createHarness();
  server = createServer((req, res) => {
    if (req.url === '/nul') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.from([0x61, 0x00, 0x62]));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"s":"\\ud800"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  stopWorker = await startToolWorker(h, 8, { httpFetch: { allowPrivate: true } });
  // Test-only refusals: a run listed in poisoned_outputs cannot have a node output written,
  // one listed in poisoned_rows cannot have any node row written (SQLSTATE 22P05, as for NUL).
  await h.db.pool.query(`
    CREATE TABLE poisoned_outputs (run_id uuid PRIMARY KEY);
    CREATE TABLE poisoned_rows (run_id uuid PRIMARY KEY);
    CREATE FUNCTION refuse_poisoned() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM poisoned_rows WHERE run_id = NEW.run_id)
         OR (NEW.output IS DISTINCT FROM OLD.output AND EXISTS (SELECT 1 FROM poisoned_outputs WHERE run_id = NEW.run_id)) THEN
        RAISE EXCEPTION 'poisoned run %', NEW.run_id USING ERRCODE = '22P05';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_poisoned BEFORE UPDATE ON node_runs FOR EACH ROW EXECUTE FUNCTION refuse_poisoned();`);
}, 60_000);

afterAll(async () => {
  await stopWorker?.();
  await h?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** Start → Tool(http_fetch `path`, 3 attempts) → End. */
function fetchChain(path: string): Graph {
  return {
    ...toolChain(),
    nodes: [
      node('start', 'Start', {}),
      node('tool', 'Tool', { toolName: 'http_fetch', arguments: { url: `${base}${path}` }, allowedUrls: [base] }, 3),
      node('end', 'End', { outcome: 'done' }),
    ],
    edges: [edge('start', 'tool'), edge('tool', 'end')],
  };
}

async function runRow(runId: string) {
  const r = await h.db.pool.query<{ status: string; failure_class: string; reason: string | null; wake_at: Date | null }>(
    'SELECT status, failure_class, reason, wake_at FROM runs WHERE id = $1',
    [runId],
  );
  return r.rows[0]!;
}

async function toolRow(runId: string) {
  const r = await h.db.pool.query<{ status: string; failure_class: string; reason: string | null; attempt: number }>(
    `SELECT status, failure_class, reason, attempt FROM node_runs WHERE run_id = $1 AND node_key = 'tool'`,
    [runId],
  );
  return r.rows[0]!;
}

const ended = (runIds: string[]) =>
  waitFor(async () => [...(await runStatuses(h.db, runIds)).values()].every((s) => ['Completed', 'Failed', 'Cancelled'].includes(s)), {
    timeoutMs: 30_000,
    description: 'runs ended',
  });

describe('a run whose tick the store refuses', () => {
  it('is quarantined after APPLY_FAILURE_LIMIT tries while the other runs of its batch complete, and never retried after', async () => {
    // created before the dispatcher starts: its first tick takes them all in one batch
    const runIds = await h.createRuns(toolChain('echo', { n: 1 }), Array.from({ length: 6 }, (_, i) => ({ i })));
    const poisoned = runIds[2]!;
    await h.db.pool.query('INSERT INTO poisoned_outputs VALUES ($1)', [poisoned]);
    d = await h.startDispatcher('d1', { APPLY_FAILURE_LIMIT: String(LIMIT) });
    await ended(runIds);
    const statuses = await runStatuses(h.db, runIds);
    expect(runIds.filter((id) => id !== poisoned).map((id) => statuses.get(id))).toEqual(Array(5).fill('Completed'));
    const row = await runRow(poisoned);
    expect(row).toMatchObject({ status: 'Failed', failure_class: 'Internal', wake_at: null });
    expect(row.reason).toMatch(/^run quarantined: the store refused its tick 3 times in a row \(22P05: poisoned run /);
    const events = await h.db.pool.query<{ kind: string; detail: { class?: string } }>('SELECT kind, detail FROM events WHERE run_id = $1 ORDER BY seq', [poisoned]);
    expect(events.rows.at(-1)).toMatchObject({ kind: 'run.failed', detail: { class: 'Internal' } });
    // the dispatcher counts the quarantine once its statement returns, a moment after the row reads Failed
    await waitFor(() => d.totals().quarantined === 1, { timeoutMs: 5_000, description: 'the quarantine counted' });
    expect(d.totals()).toMatchObject({ applyFailures: LIMIT, quarantined: 1 });
    // later runs come and go through many sweeps; the quarantined one is never tried again
    const [later] = await h.createRuns(toolChain('echo', { n: 2 }), [{}]);
    await ended([later!]);
    expect(d.totals()).toMatchObject({ applyFailures: LIMIT, quarantined: 1 });
  });

  it('ends a poisoned run that is cancelled while its work is live, by the last-resort statement when even its quarantine is refused', async () => {
    const [runId] = await h.createRuns(toolChain('wait', { ms: 4000 }), [{}]);
    await waitFor(async () => (await toolRow(runId!)).status === 'Running', { timeoutMs: 20_000, description: 'wait tool running' });
    await h.db.pool.query('INSERT INTO poisoned_rows VALUES ($1)', [runId]);
    const before = d.totals();
    expect((await requestCancel(h.db.pool, TENANT, runId!, 'operator stop'))?.outcome).toBe('cancelling');
    await publishWake(h.conn, { runId: runId! }, h.redis.prefix);
    await waitFor(async () => (await runRow(runId!)).status === 'Failed', { timeoutMs: 20_000, description: 'cancelled poisoned run ended' });
    const row = await runRow(runId!);
    expect(row).toMatchObject({ failure_class: 'Internal', wake_at: null });
    expect(row.reason).toMatch(/refused its tick 3 times in a row \(22P05: poisoned run /);
    // the node row could never be written: the run was ended without it
    expect((await toolRow(runId!)).status).toBe('Running');
    expect(d.totals()).toMatchObject({ applyFailures: before.applyFailures + LIMIT, quarantined: before.quarantined + 1 });
  });
});

describe('a worker document the store cannot keep', () => {
  it.each([
    ['U+0000 in an http_fetch body', 'nul', /^output cannot be stored: at output\.result\.body, string contains U\+0000/],
    ['a lone surrogate in an http_fetch JSON body', 'surrogate', /^output cannot be stored: at output\.result\.json\.s, string contains a lone UTF-16 surrogate/],
  ])('fails its node ValidationFailed on the first attempt and the run ends, with no refused apply (%s)', async (_what, path, reason) => {
    const before = d.totals();
    const [runId] = await h.createRuns(fetchChain(path), [{}]);
    await ended([runId!]);
    expect(await runRow(runId!)).toMatchObject({ status: 'Failed', failure_class: 'ValidationFailed' });
    const tool = await toolRow(runId!);
    expect(tool).toMatchObject({ status: 'Failed', failure_class: 'ValidationFailed', attempt: 1 });
    expect(tool.reason).toMatch(reason);
    expect(d.totals()).toMatchObject({ applyFailures: before.applyFailures, quarantined: before.quarantined });
  });
});
