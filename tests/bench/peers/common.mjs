// Shared plumbing for the peer runners (plain ESM, no dependencies): argument parsing,
// statistics, the one-JSON-line result, the overall deadline and the worker-child IPC.
// Every peer folder imports it as '../common.mjs'. Logs go to stderr; stdout carries
// exactly one JSON line (see README.md).
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds with sub-millisecond resolution (comparable across processes). */
export const nowMs = () => performance.timeOrigin + performance.now();

export const log = (...a) => process.stderr.write(`[${new Date().toISOString()}] ${a.join(' ')}\n`);

/** `--workload W1 --n 10 --k 16 --m 20 --reps 3 --timeout-s 600` with defaults per workload. */
export function parseArgs(argv = process.argv.slice(2)) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const [k, inline] = a.slice(2).split('=');
    const v = inline ?? argv[i + 1];
    if (inline === undefined) i++;
    o[k] = v;
  }
  const workload = String(o.workload ?? 'W1').toUpperCase();
  if (!['W1', 'W2', 'W3'].includes(workload)) throw new Error(`unknown --workload ${o.workload}`);
  const int = (name, d) => {
    const v = o[name] === undefined ? d : Number(o[name]);
    if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
    return v;
  };
  return {
    workload,
    n: int('n', 10),
    k: int('k', 16),
    m: int('m', 100),
    reps: int('reps', 3),
    timeoutS: int('timeout-s', 600),
  };
}

/** The params object reported for a workload (`reps` = repetitions actually measured). */
export function paramsOf(a, repsDone = a.reps) {
  if (a.workload === 'W1') return { n: a.n, reps: repsDone };
  if (a.workload === 'W2') return { k: a.k, reps: repsDone };
  return { m: a.m, reps: repsDone };
}

const startedAt = nowMs();

/**
 * Runs `fn(r)` for r = 0..reps-1 and collects the results, but starts no repetition that
 * would likely overrun 80% of the overall timeout (judged by the slowest one so far), so
 * a slow peer still reports what it measured. At least one repetition always runs.
 */
export async function repeat(args, fn) {
  const out = [];
  let slowest = 0;
  for (let r = 0; r < args.reps; r++) {
    if (r > 0 && nowMs() - startedAt + slowest > 0.8 * args.timeoutS * 1000) {
      log(`stopping after ${r} of ${args.reps} repetitions: the next would overrun the time budget`);
      break;
    }
    const t = nowMs();
    out.push(await fn(r));
    slowest = Math.max(slowest, nowMs() - t);
  }
  return out;
}

/** A note suffix when fewer repetitions than asked were measured. */
export const repsNote = (args, done) => (done < args.reps ? ` Only ${done} of ${args.reps} repetitions fit the ${args.timeoutS}s budget.` : '');

/** Nearest-rank percentile of a numeric array (null when empty). */
export function percentile(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}
export const median = (xs) => percentile(xs, 50);
export const round = (x, d = 3) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d);

/** Print the one result line and flush it. */
export function emit(peer, args, r) {
  const line = {
    peer,
    workload: args.workload,
    params: paramsOf(args, r.repsDone),
    hopP50Ms: round(r.hopP50Ms ?? null),
    hopP99Ms: round(r.hopP99Ms ?? null),
    latencyMs: round(r.latencyMs ?? null),
    runsPerSec: round(r.runsPerSec ?? null, 1),
    nodesPerSec: round(r.nodesPerSec ?? null, 1),
    notes: r.notes ?? '',
    ...(r.extra ? { extra: r.extra } : {}),
  };
  process.stdout.write(JSON.stringify(line) + '\n');
}

/** Hops (ms) between consecutive node starts of one chain. */
export function hopsOf(starts) {
  const h = [];
  for (let i = 1; i < starts.length; i++) h.push(starts[i] - starts[i - 1]);
  return h;
}

/**
 * Runs `main` under an overall deadline; always runs `cleanup`; exits 0 on success, 1 on
 * failure or timeout (after printing a result line with the error in `notes`).
 */
export async function runMain(peer, args, main, cleanup) {
  let timer;
  const deadline = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Error(`overall timeout ${args.timeoutS}s`)), args.timeoutS * 1000);
    // SIGTERM/SIGINT end the run the same way: a FAILED line, then cleanup.
    for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => rej(new Error(`stopped by ${sig}`)));
  });
  let code = 0;
  try {
    const r = await Promise.race([main(), deadline]);
    emit(peer, args, r);
  } catch (e) {
    log(`${peer} failed:`, e?.stack ?? e);
    emit(peer, args, { notes: `FAILED: ${String(e?.message ?? e).slice(0, 300)}` });
    code = 1;
  } finally {
    clearTimeout(timer);
    // The result line is out: a stray error while tearing down must not change the exit code.
    process.on('uncaughtException', (e) => log(`${peer} error during cleanup:`, e?.message ?? e));
    process.on('unhandledRejection', (e) => log(`${peer} rejection during cleanup:`, e?.message ?? e));
    try {
      await Promise.race([cleanup(), new Promise((r) => setTimeout(r, 15000))]);
    } catch (e) {
      log(`${peer} cleanup failed:`, e?.stack ?? e);
    }
  }
  process.exit(code);
}

/**
 * A worker child process speaking the tiny IPC protocol: the child sends `{type:'ready'}`
 * once, then `{type:'done', id, marks?}` per finished chain/run. `waitDone(id)` resolves
 * with `{t, marks}` where `t` is the parent's receive time.
 */
export function startWorkerChild(file, env = {}) {
  const child = fork(file, [], { env: { ...process.env, ...env }, stdio: ['ignore', 2, 2, 'ipc'] /* child stdout → our stderr: stdout carries only the result line */ });
  const waiting = new Map();
  const early = new Map();
  let readyResolve;
  let readyReject;
  const ready = new Promise((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  child.on('message', (msg) => {
    if (msg?.type === 'ready') readyResolve();
    else if (msg?.type === 'done') {
      const t = nowMs();
      const w = waiting.get(msg.id);
      const v = { t, marks: msg.marks, data: msg.data };
      if (w) {
        waiting.delete(msg.id);
        w(v);
      } else early.set(msg.id, v);
    } else if (msg?.type === 'error') log('worker error:', msg.error);
  });
  child.on('exit', (code, sig) => {
    readyReject(new Error(`worker exited early (${code ?? sig})`));
    for (const [, w] of waiting) w({ error: `worker exited (${code ?? sig})` });
    waiting.clear();
  });
  return {
    child,
    ready,
    waitDone(id) {
      const e = early.get(id);
      if (e) {
        early.delete(id);
        return Promise.resolve(e);
      }
      return new Promise((res) => waiting.set(id, res));
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      try {
        child.send({ type: 'stop' });
      } catch {
        /* channel already closed */
      }
      const t = setTimeout(() => child.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Child side: per-chain node-start marks and the done message. */
export function childRecorder() {
  const marks = new Map();
  return {
    mark(id, idx) {
      let a = marks.get(id);
      if (!a) marks.set(id, (a = []));
      a[idx] = nowMs();
    },
    done(id, withMarks = false) {
      const m = marks.get(id);
      marks.delete(id);
      process.send?.({ type: 'done', id, marks: withMarks ? m : undefined });
    },
  };
}

/** Child side: resolve when the parent says stop (or the IPC channel closes). */
export function onStop(fn) {
  let called = false;
  const go = async () => {
    if (called) return;
    called = true;
    try {
      await fn();
    } finally {
      process.exit(0);
    }
  };
  process.on('message', (m) => {
    if (m?.type === 'stop') void go();
  });
  process.on('disconnect', () => void go());
}

/**
 * Postgres transactions (commits + rollbacks) in one database, from pg_stat_database.
 * Backends flush their counters at the latest when they exit, so read `after` only once
 * every connection of the engine is closed. `pg` is the caller's pg module.
 */
export async function pgTxCount(pg, adminUrl, db) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query('select xact_commit + xact_rollback as tx from pg_stat_database where datname = $1', [db]);
    return Number(r.rows[0]?.tx ?? 0);
  } finally {
    await c.end();
  }
}

/**
 * The peer's databases on DATABASE_URL's server: `dbUrl(name)` and `admin(sql)`, one statement on
 * the `postgres` database (create and drop the peer's own). `pg` is the caller's pg module.
 */
export function peerDatabases(pg) {
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbUrl = (name) => Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
  async function admin(sql) {
    const c = new pg.Client({ connectionString: dbUrl('postgres') });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  }
  return { dbUrl, admin };
}

/** A worker child's done message (`waitDone`), or its error thrown. */
export async function doneOrThrow(waiting) {
  const r = await waiting;
  if (r.error) throw new Error(r.error);
  return r;
}

/** Every done message of a batch (`waitDone` each), or the first error thrown. */
export async function allDoneOrThrow(waitings) {
  const rs = await Promise.all(waitings);
  const bad = rs.find((r) => r.error);
  if (bad) throw new Error(bad.error);
  return rs;
}

/** `[1.2, 3.4]`: measured values for a note. */
export const listed = (xs, digits = 1) => `[${xs.map((x) => x.toFixed(digits)).join(', ')}]`;

/**
 * Measures the workload of `args` the same way for every peer: a small warm-up (W1 n ≤ 10, W2
 * k ≤ 16, W3 m ≤ 20, not counted), then the repetitions, then the figures of the result line.
 * The peer brings how one repetition runs and the words of its notes:
 * - `run.w1(n, id)` → `{ hops, total }` (ms), `run.w2(k, id)` → ms to the join, `run.w3(m, rep)` → ms for m runs;
 * - `say.w1({ hops, chains })`, `say.w2({ latencies })`, `say.w3({ secs })` → the notes
 *   (the repetitions note is added).
 */
export async function measureWorkload(args, run, say) {
  if (args.workload === 'W1') {
    await run.w1(Math.min(args.n, 10), 'warm');
    const xs = await repeat(args, (r) => run.w1(args.n, `w1-${r}`));
    const hops = xs.flatMap((x) => x.hops);
    return {
      repsDone: xs.length,
      hopP50Ms: percentile(hops, 50),
      hopP99Ms: percentile(hops, 99),
      latencyMs: median(xs.map((x) => x.total)),
      notes: say.w1({ hops, chains: xs.length }) + repsNote(args, xs.length),
    };
  }
  if (args.workload === 'W2') {
    await run.w2(Math.min(args.k, 16), 'warm');
    const latencies = await repeat(args, (r) => run.w2(args.k, `w2-${r}`));
    return {
      repsDone: latencies.length,
      latencyMs: median(latencies),
      notes: say.w2({ latencies }) + repsNote(args, latencies.length),
      extra: { latenciesMs: latencies },
    };
  }
  await run.w3(Math.min(args.m, 20), 'warm');
  const secs = (await repeat(args, (r) => run.w3(args.m, r))).map((ms) => ms / 1000);
  const s = median(secs);
  return {
    repsDone: secs.length,
    runsPerSec: args.m / s,
    nodesPerSec: (7 * args.m) / s,
    latencyMs: s * 1000,
    notes: say.w3({ secs }) + repsNote(args, secs.length),
    extra: { secs },
  };
}

/**
 * A measured result with the Postgres transactions per node added (to its notes and extra), read
 * once every engine connection is closed.
 */
export async function withPgTransactions(pg, adminUrl, db, before, nodes, r) {
  const tx = await pgTxPerNode(pg, adminUrl, db, before, nodes);
  return {
    ...r,
    notes: `${r.notes} Postgres: ${tx.pgTxPerNode} transactions per node (pg_stat_database of ${db}, all nodes incl. warm-up, engine background work included).`,
    extra: { ...(r.extra ?? {}), ...tx },
  };
}

/**
 * Runs a Postgres-backed peer under {@link runMain}: `measure()`, then `close()` (every engine
 * connection, so the backends flush their counters), then the transactions per node since
 * `counts.txBefore` over `counts.nodes` (both kept by the peer as it measures). Cleanup closes
 * again (`close` must be safe to call twice) and drops the peer's database.
 */
export async function runPgPeer(pg, { peer, args, db, counts, measure, close }) {
  const { dbUrl, admin } = peerDatabases(pg);
  const main = async () => {
    const r = await measure();
    await close();
    return withPgTransactions(pg, dbUrl('postgres'), db, counts.txBefore, counts.nodes, r);
  };
  const cleanup = async () => {
    await close();
    await admin(`drop database if exists ${db} with (force)`);
  };
  await runMain(peer, args, main, cleanup);
}

/** `{ txPerNode, tx, nodes }` for the extra field, after waiting for exiting backends to flush. */
export async function pgTxPerNode(pg, adminUrl, db, before, nodes) {
  await new Promise((r) => setTimeout(r, 500));
  const tx = (await pgTxCount(pg, adminUrl, db)) - before;
  return { pgTxPerNode: Math.round((tx / nodes) * 100) / 100, pgTx: tx, nodes };
}
