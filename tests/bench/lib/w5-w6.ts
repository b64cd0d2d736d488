/**
 * W5 parked runs and W6 recovery.
 * W5: 100 concurrent chain runs (N = 10) with no parked runs, then the same with P runs
 * parked on a Pause, then with P runs parked on a `Wait PT1H` timer; per-hop p50/p99 and
 * Postgres statements/s (transactions/s without pg_stat_statements) of each phase, plus idle
 * windows that show what parked runs cost.
 * W6: runs of `wait` chains in flight; `kill -9` the dispatcher owning one; recovery =
 * kill → the first node of a run on its shards admitted (queued) after the kill.
 */
import type { BenchCluster } from './flowline';
import { chain, parked, parkedOnTimer } from './graphs';
import { delta } from './cost';
import { mapLimit, percentile, sleep } from './stats';
import { assertCompleted, chainHops, startMany, waitTerminal, type Ctx } from './workloads';

export interface W5Phase {
  parked: number;
  /** what the parked runs wait on */
  on: 'none' | 'Pause' | 'Wait PT1H' | 'a delayed start PT1H';
  hopP50: number;
  hopP99: number;
  activeQueriesPerSec: number;
  idleQueriesPerSec: number;
}

export interface W5Result {
  unit: 'statements' | 'transactions';
  phases: W5Phase[];
  /** (idle/s with runs parked on a Pause − idle/s without) ÷ dispatchers */
  parkedQueriesPerSecPerDispatcher: number;
  /** the same for runs parked on a `Wait PT1H` timer */
  timerParkedQueriesPerSecPerDispatcher: number;
  /** the same for runs Scheduled an hour ahead (`startAt`): no slot, no node, one wake_at */
  delayedQueriesPerSecPerDispatcher: number;
  hopP50Change: number;
  timerHopP50Change: number;
}

async function rate(
  ctx: Ctx,
  fn: () => Promise<void>,
): Promise<{ perSec: number; unit: 'statements' | 'transactions' }> {
  const a = await ctx.mon.snapshot();
  await fn();
  await sleep(1200);
  const b = await ctx.mon.snapshot();
  const d = delta(a, b);
  return d.statements === null
    ? { perSec: d.xacts / d.seconds, unit: 'transactions' }
    : { perSec: d.statements / d.seconds, unit: 'statements' };
}

async function phase(
  ctx: Ctx,
  chainDef: string,
  parkedCount: number,
  on: W5Phase['on'],
  idleMs: number,
): Promise<{ phase: W5Phase; unit: 'statements' | 'transactions' }> {
  const idle = await rate(ctx, () => sleep(idleMs));
  let ids: string[] = [];
  const active = await rate(ctx, async () => {
    ids = await startMany(ctx, chainDef, 100, (i) => ({ i }));
    await waitTerminal(ctx.mon, ids, 120_000, 50);
  });
  await assertCompleted(ctx.mon, ids);
  const hops = await chainHops(ctx.mon, ids);
  return {
    phase: {
      parked: parkedCount,
      on,
      hopP50: percentile(hops, 50),
      hopP99: percentile(hops, 99),
      activeQueriesPerSec: active.perSec,
      idleQueriesPerSec: idle.perSec,
    },
    unit: idle.unit,
  };
}

export async function w5(
  ctx: Ctx,
  parkedCount: number,
  dispatchers: number,
  idleMs: number,
): Promise<W5Result> {
  const chainDef = await ctx.api.createDefinition('w5-chain', chain(10));
  const pauseDef = await ctx.api.createDefinition('w5-parked', parked());
  const warm = await startMany(ctx, chainDef, 20);
  await waitTerminal(ctx.mon, warm, 60_000);
  const before = await phase(ctx, chainDef, 0, 'none', idleMs);
  ctx.log(
    `W5 unparked: hop p50 ${before.phase.hopP50.toFixed(2)} ms, idle ${before.phase.idleQueriesPerSec.toFixed(1)}/s`,
  );

  // parked on a person: the run reads WaitingForApproval
  const pauseIds = await startMany(ctx, pauseDef, parkedCount);
  await parkedCountReaches(
    ctx,
    parkedCount,
    `select count(*)::int as n from runs where definition_id = $1 and status = 'WaitingForApproval'`,
    pauseDef,
  );
  const onPause = await phase(ctx, chainDef, parkedCount, 'Pause', idleMs);
  ctx.log(
    `W5 ${parkedCount} parked on a Pause: hop p50 ${onPause.phase.hopP50.toFixed(2)} ms, idle ${onPause.phase.idleQueriesPerSec.toFixed(1)}/s`,
  );
  // release the parked runs so the next phase starts from a quiet cluster
  await mapLimit(pauseIds, 32, (id) => ctx.api.decide(id, 'review', 'Reject'));
  await waitTerminal(ctx.mon, pauseIds, 300_000, 250);

  // parked on a durable timer: the Wait node reads Running with no job on any queue
  const timerDef = await ctx.api.createDefinition('w5-timer', parkedOnTimer());
  const timerIds = await startMany(ctx, timerDef, parkedCount);
  await parkedCountReaches(
    ctx,
    parkedCount,
    `select count(*)::int as n from node_runs n join runs r on r.id = n.run_id
      where r.definition_id = $1 and n.node_key = 'nap' and n.status = 'Running'`,
    timerDef,
  );
  const onTimer = await phase(ctx, chainDef, parkedCount, 'Wait PT1H', idleMs);
  ctx.log(
    `W5 ${parkedCount} parked on Wait PT1H: hop p50 ${onTimer.phase.hopP50.toFixed(2)} ms, idle ${onTimer.phase.idleQueriesPerSec.toFixed(1)}/s`,
  );
  await mapLimit(timerIds, 32, (id) => ctx.api.cancel(id));
  await waitTerminal(ctx.mon, timerIds, 300_000, 250);

  // delayed starts an hour ahead: the run reads Scheduled, holds no slot and has no node yet
  const delayedDef = await ctx.api.createDefinition('w5-delayed', chain(1));
  const startAt = new Date(Date.now() + 3_600_000);
  const delayedIds = await mapLimit(
    Array.from({ length: parkedCount }, (_, i) => i),
    64,
    (i) => ctx.api.startRunAt(delayedDef, { i }, startAt),
  );
  await parkedCountReaches(
    ctx,
    parkedCount,
    `select count(*)::int as n from runs where definition_id = $1 and status = 'Scheduled'`,
    delayedDef,
  );
  const onDelay = await phase(ctx, chainDef, parkedCount, 'a delayed start PT1H', idleMs);
  ctx.log(
    `W5 ${parkedCount} Scheduled PT1H ahead: hop p50 ${onDelay.phase.hopP50.toFixed(2)} ms, idle ${onDelay.phase.idleQueriesPerSec.toFixed(1)}/s`,
  );
  await mapLimit(delayedIds, 32, (id) => ctx.api.cancel(id));
  await waitTerminal(ctx.mon, delayedIds, 300_000, 250);

  const perDispatcher = (p: W5Phase) => (p.idleQueriesPerSec - before.phase.idleQueriesPerSec) / dispatchers;
  return {
    unit: before.unit,
    phases: [before.phase, onPause.phase, onTimer.phase, onDelay.phase],
    parkedQueriesPerSecPerDispatcher: perDispatcher(onPause.phase),
    timerParkedQueriesPerSecPerDispatcher: perDispatcher(onTimer.phase),
    delayedQueriesPerSecPerDispatcher: perDispatcher(onDelay.phase),
    hopP50Change: onPause.phase.hopP50 / before.phase.hopP50 - 1,
    timerHopP50Change: onTimer.phase.hopP50 / before.phase.hopP50 - 1,
  };
}

/** Waits until `sql` (one `$1`: the definition) counts `count` parked runs, then lets the sweeps that saw them arrive settle. */
async function parkedCountReaches(ctx: Ctx, count: number, sql: string, definitionId: string): Promise<void> {
  const until = Date.now() + 300_000;
  for (;;) {
    const [r] = await ctx.mon.query<{ n: number }>(sql, [definitionId]);
    if (r!.n >= count) break;
    if (Date.now() > until) throw new Error(`only ${r!.n} of ${count} runs parked after 300 s`);
    await sleep(250);
  }
  await sleep(2000);
}

/** W6 once: returns ms from kill to the first admission on the dead dispatcher's shards. */
export async function w6Once(
  ctx: Ctx,
  c: BenchCluster,
  def: string,
): Promise<{ ms: number; victim: string; completed: boolean }> {
  const ids = await startMany(ctx, def, 16, (i) => ({ i }));
  await sleep(1500);
  const [own] = await ctx.mon.query<{ owner: string }>(
    `select l.owner from runs r join shard_leases l on l.shard = r.shard
      where r.id = any($1::uuid[]) and r.status = 'Running' and l.expires_at > now() and l.owner is not null limit 1`,
    [ids],
  );
  if (!own) throw new Error('no running run with a live owner');
  const victim = own.owner;
  const shards = (
    await ctx.mon.query<{ shard: number }>(`select shard from shard_leases where owner = $1`, [victim])
  ).map((r) => r.shard);
  const tKill = Date.now();
  await c.cluster.kill(victim, 'SIGKILL');
  let ms = NaN;
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const [r] = await ctx.mon.query<{ ms: number | null }>(
      `select extract(epoch from min(n.queued_at)) * 1000 as ms from node_runs n join runs r on r.id = n.run_id
        where r.id = any($1::uuid[]) and r.shard = any($2::int[]) and n.queued_at > to_timestamp($3 / 1000.0)`,
      [ids, shards, tKill],
    );
    if (r && r.ms !== null) {
      ms = Number(r.ms) - tKill;
      break;
    }
    await sleep(20);
  }
  // bring the dispatcher back for the next repetition / workload
  const spec = c.cluster.processes.get(victim)!.spec;
  c.cluster.launch(spec);
  await waitTerminal(ctx.mon, ids, 120_000, 200);
  const bad = await ctx.mon.query<{ n: number }>(
    `select count(*)::int as n from runs where id = any($1::uuid[]) and status <> 'Completed'`,
    [ids],
  );
  return { ms, victim, completed: bad[0]!.n === 0 };
}

/** The chain W6 kills into: 80 `wait` nodes of 100 ms, ≈ 9 s per run. */
export const w6Graph = () => chain(80, 'wait', { ms: 100 });

export interface W6TimerResult {
  runs: number;
  victim: string;
  /** how late each `Wait PT2S` woke after its due time (node finished − started − 2 s), ms */
  lateP50: number;
  lateP99: number;
  lateMax: number;
  completed: boolean;
}

/**
 * W6 timers: `runs` runs parked on `Wait PT2S`; about a second in, `kill -9` the dispatcher that
 * owns the most of them. Each wait's lateness = its node's finish − its start − 2 s (database
 * clock): what a timer due while its owner is dead costs.
 */
export async function w6Timers(ctx: Ctx, c: BenchCluster, runs: number): Promise<W6TimerResult> {
  const def = await ctx.api.createDefinition('w6-timers', parkedOnTimer('PT2S'));
  const ids = await startMany(ctx, def, runs);
  const parkedSql = `select count(*)::int as n from node_runs where run_id = any($1::uuid[]) and node_key = 'nap' and started_at is not null`;
  for (const until = Date.now() + 60_000; ; ) {
    const [r] = await ctx.mon.query<{ n: number }>(parkedSql, [ids]);
    if (r!.n >= runs) break;
    if (Date.now() > until) throw new Error(`only ${r!.n} of ${runs} Waits started after 60 s`);
    await sleep(50);
  }
  await sleep(1000);
  const [own] = await ctx.mon.query<{ owner: string }>(
    `select l.owner from runs r join shard_leases l on l.shard = r.shard
      where r.id = any($1::uuid[]) and l.expires_at > now() and l.owner is not null
      group by l.owner order by count(*) desc limit 1`,
    [ids],
  );
  if (!own) throw new Error('no parked run with a live owner');
  await c.cluster.kill(own.owner, 'SIGKILL');
  await waitTerminal(ctx.mon, ids, 120_000, 100);
  // bring the dispatcher back for the next workload
  c.cluster.launch(c.cluster.processes.get(own.owner)!.spec);
  const rows = await ctx.mon.query<{ late: number; ok: boolean }>(
    `select extract(epoch from (n.finished_at - n.started_at)) * 1000 - 2000 as late, r.status = 'Completed' as ok
       from node_runs n join runs r on r.id = n.run_id where r.id = any($1::uuid[]) and n.node_key = 'nap'`,
    [ids],
  );
  const late = rows.map((r) => Number(r.late));
  return {
    runs,
    victim: own.owner,
    lateP50: percentile(late, 50),
    lateP99: percentile(late, 99),
    lateMax: Math.max(...late),
    completed: rows.length === runs && rows.every((r) => r.ok),
  };
}

export interface W6DelayedResult {
  runs: number;
  victim: string;
  /** how late each run started after its `startAt` (runs.started_at − not_before), ms */
  lateP50: number;
  lateP99: number;
  lateMax: number;
  completed: boolean;
}

/**
 * W6 delayed starts: `runs` runs created with one `startAt` a few seconds ahead; 50 ms before
 * it (too late for a takeover to finish first), `kill -9` the dispatcher that owns the most of them. Each run's lateness = its
 * start − its `startAt`: what a delayed start due while its owner is dead costs.
 */
export async function w6DelayedStarts(ctx: Ctx, c: BenchCluster, runs: number): Promise<W6DelayedResult> {
  const def = await ctx.api.createDefinition('w6-delayed', chain(1));
  const startAt = new Date(Date.now() + 6_000);
  const ids = await mapLimit(
    Array.from({ length: runs }, (_, i) => i),
    64,
    (i) => ctx.api.startRunAt(def, { i }, startAt),
  );
  const [own] = await ctx.mon.query<{ owner: string }>(
    `select l.owner from runs r join shard_leases l on l.shard = r.shard
      where r.id = any($1::uuid[]) and r.status = 'Scheduled' and l.expires_at > now() and l.owner is not null
      group by l.owner order by count(*) desc limit 1`,
    [ids],
  );
  if (!own) throw new Error('no Scheduled run with a live owner');
  const killIn = startAt.getTime() - 50 - Date.now();
  if (killIn < 0) throw new Error(`starting ${runs} delayed runs took past their startAt`);
  await sleep(killIn);
  await c.cluster.kill(own.owner, 'SIGKILL');
  await waitTerminal(ctx.mon, ids, 120_000, 100);
  c.cluster.launch(c.cluster.processes.get(own.owner)!.spec);
  const rows = await ctx.mon.query<{ late: number | null; ok: boolean }>(
    `select extract(epoch from (started_at - not_before)) * 1000 as late, status = 'Completed' as ok
       from runs where id = any($1::uuid[])`,
    [ids],
  );
  const late = rows.map((r) => Number(r.late ?? Infinity));
  return {
    runs,
    victim: own.owner,
    lateP50: percentile(late, 50),
    lateP99: percentile(late, 99),
    lateMax: Math.max(...late),
    completed: rows.length === runs && rows.every((r) => r.ok),
  };
}
