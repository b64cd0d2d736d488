/**
 * Where a W1 hop's time goes: CPU time each process of the cluster (API, each dispatcher,
 * the tool worker), the Postgres server (every backend and auxiliary process) and Redis
 * spend per chain node, read from /proc/<pid>/stat (utime + stime) around the measured
 * runs. The wall time per node minus the summed CPU is time no process spent computing:
 * hand-offs between processes (wake-ups, socket round trips) and I/O waits.
 * Linux only; elsewhere the profile is simply absent.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Cluster } from '@flowline/testing';
import type { Monitor } from './cost';

/** process group label → pids */
export type ProcessGroups = Map<string, number[]>;

export interface CpuPerNode {
  /** label → CPU ms per chain node */
  byProcess: Record<string, number>;
  /** sum over every process */
  totalMs: number;
  /** wall ms per chain node over the same runs */
  wallMs: number;
}

let clockTicks: number | null = null;
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** True where /proc/<pid>/stat can be read. */
export function cpuProfileAvailable(): boolean {
  return existsSync(`/proc/${process.pid}/stat`);
}

/** The cluster's processes, the Postgres server's processes and the Redis server. */
export async function benchProcesses(cluster: Cluster, mon: Monitor, redis: Redis): Promise<ProcessGroups> {
  const groups: ProcessGroups = new Map();
  for (const [label, mp] of cluster.processes) if (mp.proc.pid) groups.set(label, [mp.proc.pid]);
  const pg = await mon.query<{ pid: number }>('select pid from pg_stat_activity');
  groups.set('postgres', pg.map((r) => r.pid));
  const pid = /process_id:(\d+)/.exec(await redis.info('server'))?.[1];
  if (pid) groups.set('redis', [Number(pid)]);
  return groups;
}

/** CPU ms used so far by each group (processes that are gone count 0). */
export function cpuMs(groups: ProcessGroups): Map<string, number> {
  const out = new Map<string, number>();
  const hz = ticksPerSecond();
  for (const [label, pids] of groups) {
    let ticks = 0;
    for (const pid of pids) {
      try {
        // fields after the command name, which is in parentheses and may contain spaces
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(rest[11]) + Number(rest[12]); // utime, stime (fields 14 and 15)
      } catch {
        // exited
      }
    }
    out.set(label, (ticks * 1000) / hz);
  }
  return out;
}

/** Per-node CPU of each group between two `cpuMs` readings. */
export function cpuPerNode(before: Map<string, number>, after: Map<string, number>, nodes: number, wallMs: number): CpuPerNode {
  const byProcess: Record<string, number> = {};
  let total = 0;
  for (const [label, ms] of after) {
    const d = Math.max(0, ms - (before.get(label) ?? 0)) / nodes;
    byProcess[label] = d;
    total += d;
  }
  return { byProcess, totalMs: total, wallMs: wallMs / nodes };
}
