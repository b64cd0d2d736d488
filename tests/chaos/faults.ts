/**
 * The fault schedule: kill -9 a random (or a listed) dispatcher or worker every `killEveryMs`
 * (the supervisor restarts it), plus one FLUSHALL, one Redis restart and one Postgres restart
 * at fixed fractions of the window.
 */
import { Redis } from 'ioredis';
import type { ChaosCluster } from './chaos-cluster';

export interface FaultPlan {
  windowMs: number;
  killEveryMs: number;
  /**
   * processes to kill -9, one per `killEveryMs`, in this order (absent = a random killable
   * process each time); with `whileRunning` the kill waits (up to `killEveryMs`) until a node of
   * that key is Running, so it lands inside a call
   */
  kills?: readonly PlannedKill[];
  /** window fractions of the one-off faults; null leaves a fault out */
  flushAt: number | null;
  redisRestartAt: number | null;
  pgRestartAt: number | null;
}

/** One planned kill -9. */
export interface PlannedKill {
  label: string;
  /** node key: kill only once a node of this key is Running (polled every 50 ms) */
  whileRunning?: string;
}

export interface FaultFigures {
  kills: number;
  /** planned kills with `whileRunning` that found such a node Running when they struck */
  killsDuringCall: number;
  killsByLabel: Record<string, number>;
  flushes: number;
  redisRestarts: number;
  pgRestarts: number;
  /** wall-clock ms when the last fault ended (Postgres/Redis back up, process killed); the window's end when none was injected */
  lastFaultAt: number;
  log: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until a node of `nodeKey` is Running or `untilMs` (wall clock) passes; true when one was found. */
async function nodeRunning(c: ChaosCluster, nodeKey: string, untilMs: number): Promise<boolean> {
  while (Date.now() < untilMs) {
    const r = await c.pool.query("select 1 from node_runs where node_key = $1 and status = 'Running' limit 1", [nodeKey]).catch(() => null);
    if (r && r.rowCount !== null && r.rowCount > 0) return true;
    await sleep(50);
  }
  return false;
}

/** Runs the plan to its end; resolves with what was injected. */
export async function injectFaults(c: ChaosCluster, plan: FaultPlan, random: () => number = Math.random): Promise<FaultFigures> {
  const f: FaultFigures = { kills: 0, killsDuringCall: 0, killsByLabel: {}, flushes: 0, redisRestarts: 0, pgRestarts: 0, lastFaultAt: Date.now(), log: [] };
  const t0 = Date.now();
  const note = (what: string) => {
    f.lastFaultAt = Date.now();
    f.log.push(`+${((f.lastFaultAt - t0) / 1000).toFixed(1)}s ${new Date(f.lastFaultAt).toISOString()} ${what}`);
  };
  const oneOffs: { at: number; name: string; run: () => Promise<void> }[] = [];
  if (plan.flushAt !== null) {
    oneOffs.push({
      at: plan.flushAt,
      name: 'FLUSHALL',
      run: async () => {
        const r = new Redis(c.redis.url, { maxRetriesPerRequest: 3, lazyConnect: true });
        try {
          await r.connect();
          await r.flushall();
          f.flushes++;
        } finally {
          r.disconnect();
        }
      },
    });
  }
  if (plan.redisRestartAt !== null) {
    oneOffs.push({ at: plan.redisRestartAt, name: 'redis restart', run: async () => { await c.redis.restart(); f.redisRestarts++; } });
  }
  if (plan.pgRestartAt !== null) {
    oneOffs.push({ at: plan.pgRestartAt, name: 'postgres restart', run: async () => { await c.pg.restart(); f.pgRestarts++; } });
  }
  oneOffs.sort((a, b) => a.at - b.at);

  const runOneOffs = (async () => {
    for (const o of oneOffs) {
      const due = t0 + o.at * plan.windowMs;
      if (due > Date.now()) await sleep(due - Date.now());
      try {
        await o.run();
        note(o.name);
      } catch (err) {
        f.log.push(`${o.name} FAILED: ${(err as Error).message}`);
      }
    }
  })();

  const runKills = (async () => {
    if (plan.killEveryMs <= 0) return;
    for (let at = t0 + plan.killEveryMs, i = 0; at < t0 + plan.windowMs; at += plan.killEveryMs, i++) {
      if (plan.kills && i >= plan.kills.length) break;
      if (at > Date.now()) await sleep(at - Date.now());
      const planned = plan.kills?.[i];
      const label = planned ? planned.label : c.killable[Math.floor(random() * c.killable.length)]!;
      if (planned?.whileRunning !== undefined && (await nodeRunning(c, planned.whileRunning, at + plan.killEveryMs))) f.killsDuringCall++;
      await c.kill(label);
      f.kills++;
      f.killsByLabel[label] = (f.killsByLabel[label] ?? 0) + 1;
      note(`kill -9 ${label}`);
    }
  })();

  await Promise.all([runOneOffs, runKills]);
  // Without any fault the deadline counts from the end of the window instead.
  if (f.log.length === 0) f.lastFaultAt = Math.max(Date.now(), t0 + plan.windowMs);
  return f;
}
