/**
 * The chaos workload as a client would drive it: define the shapes, POST runs spread
 * over a window (retrying with the same requestId until the API answers), cancel the
 * `cancel` runs through the cancel route, and answer every pause through decide.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from '@flowline/db';
import { graphOf, type Shape } from './graphs';

export interface PostedRun {
  runId: string;
  /** the run's requestId and input `tag` */
  tag: string;
  shape: Shape;
  postedAt: number;
}

export interface WorkloadFigures {
  posted: PostedRun[];
  /** runs whose POST never got a 202 within the retry budget */
  postsAbandoned: number;
  /** POST attempts that failed and were retried (API restarting, Postgres down, …) */
  postRetries: number;
  cancelsSent: number;
  decisionsSent: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One HTTP call; resolves with the status and parsed body, or throws on a network error. */
async function call(url: string, method: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
  } catch {
    return { status: res.status, json: text };
  }
}

/** A 4xx answer other than 429: retrying cannot help. */
class RefusedError extends Error {}

/** True for an answer that asks to be retried later: 429 (a tenant's bound) or any 5xx (503 Overloaded, a replica restarting). */
const retryLater = (status: number) => status === 429 || status >= 500;

/** Retries `attempt` (network errors, 429 and 5xx) until it returns a value or `budgetMs` passes. */
async function retrying<T>(budgetMs: number, attempt: () => Promise<T | undefined>, onRetry: () => void = () => undefined): Promise<T | undefined> {
  const until = Date.now() + budgetMs;
  for (;;) {
    try {
      const v = await attempt();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof RefusedError) throw err;
      // network error: the API replica is restarting or its database is down
    }
    if (Date.now() > until) return undefined;
    onRetry();
    await sleep(250);
  }
}

export interface WorkloadOptions {
  apiUrls: string[];
  pool: Pool;
  runs: number;
  /** the shapes mixed round-robin */
  shapes: readonly Shape[];
  /** POSTs are spread evenly over this window */
  windowMs: number;
  /** fraction of `pause` runs rejected instead of approved */
  rejectShare?: number;
}

export interface Workload {
  figures: WorkloadFigures;
  /** resolves when every run was posted (or abandoned) and every cancel sent */
  posted: Promise<void>;
  /** stops the decision loop */
  stop(): void;
}

/** Defines the shapes (retrying), then starts posting, cancelling and deciding in the background. */
export async function startWorkload(o: WorkloadOptions): Promise<Workload> {
  const api = (i: number) => o.apiUrls[i % o.apiUrls.length]!;
  const definitions = new Map<Shape, string>();
  for (const shape of o.shapes) {
    const id = await retrying(60_000, async () => {
      const r = await call(`${api(0)}/v1/definitions`, 'POST', { name: `chaos-${shape}`, graph: graphOf(shape) });
      if (r.status === 201) return (r.json as { id: string }).id;
      if (!retryLater(r.status)) throw new RefusedError(`defining ${shape} answered ${r.status}: ${JSON.stringify(r.json)}`);
      return undefined;
    });
    if (!id) throw new Error(`could not define ${shape}`);
    definitions.set(shape, id);
  }

  const figures: WorkloadFigures = { posted: [], postsAbandoned: 0, postRetries: 0, cancelsSent: 0, decisionsSent: 0 };
  const pending: Promise<void>[] = [];
  const started = Date.now();

  const cancelLater = async (run: PostedRun, n: number) => {
    await sleep(200 + ((n * 7919) % 2300));
    const ok = await retrying(120_000, async () => {
      const r = await call(`${api(n + 1)}/v1/runs/${run.runId}/cancel`, 'POST', {});
      if (r.status === 202 || r.status === 200) return true;
      if (!retryLater(r.status)) throw new RefusedError(`cancel answered ${r.status}`);
      return undefined;
    });
    if (ok) figures.cancelsSent++;
  };

  const postOne = async (n: number) => {
    const shape = o.shapes[n % o.shapes.length]!;
    const tag = randomUUID();
    const definitionId = definitions.get(shape)!;
    const runId = await retrying(
      120_000,
      async () => {
        const r = await call(`${api(n)}/v1/definitions/${definitionId}/runs`, 'POST', { requestId: tag, input: { tag } });
        if (r.status === 202) return (r.json as { runId: string }).runId;
        if (!retryLater(r.status)) throw new RefusedError(`POST run answered ${r.status}: ${JSON.stringify(r.json)}`);
        return undefined;
      },
      () => figures.postRetries++,
    );
    if (!runId) {
      figures.postsAbandoned++;
      return;
    }
    const run: PostedRun = { runId, tag, shape, postedAt: Date.now() };
    figures.posted.push(run);
    if (shape === 'cancel') await cancelLater(run, n);
  };

  const posting = (async () => {
    for (let n = 0; n < o.runs; n++) {
      const due = started + (n * o.windowMs) / o.runs;
      if (due > Date.now()) await sleep(due - Date.now());
      pending.push(postOne(n));
    }
    await Promise.all(pending);
  })();

  // Decider: every pause is answered through the API (stable operationId per gate, so a retry replays).
  let stopped = false;
  const operationIds = new Map<string, string>();
  const inFlight = new Set<string>();
  /** gates answered 202, by time: re-sent (same operationId, a replay) only after RESEND_MS */
  const answered = new Map<string, number>();
  const RESEND_MS = 5_000;
  const rejectShare = o.rejectShare ?? 0.25;
  const deciding = (async () => {
    let round = 0;
    while (!stopped) {
      round++;
      try {
        const r = await o.pool.query<{ run_id: string; node_key: string }>(
          "select run_id, node_key from node_runs where status = 'WaitingForApproval' limit 500",
        );
        for (const row of r.rows) {
          const gate = `${row.run_id}/${row.node_key}`;
          if (inFlight.has(gate) || Date.now() - (answered.get(gate) ?? 0) < RESEND_MS) continue;
          inFlight.add(gate);
          let op = operationIds.get(gate);
          if (!op) {
            op = randomUUID();
            operationIds.set(gate, op);
          }
          const decision = parseInt(row.run_id.slice(0, 2), 16) / 256 < rejectShare ? 'Reject' : 'Approve';
          void call(`${api(round)}/v1/runs/${row.run_id}/nodes/${row.node_key}/decide`, 'POST', { operationId: op, decision })
            .then((res) => {
              if (res.status !== 202) return;
              if (!answered.has(gate)) figures.decisionsSent++;
              answered.set(gate, Date.now());
            })
            .catch(() => undefined)
            .finally(() => inFlight.delete(gate));
        }
      } catch {
        // Postgres restarting: ask again next round
      }
      await sleep(300);
    }
  })();

  return {
    figures,
    posted: posting,
    stop() {
      stopped = true;
      void deciding;
    },
  };
}
