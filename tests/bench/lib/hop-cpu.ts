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

/**
 * process group label → pids, or a Postgres server by its postmaster's pid: its backends come and
 * go with the pools, so the group is read as the postmaster (with what its exited children
 * spent, cutime + cstime) plus every live child at each reading
 */
export type ProcessGroups = Map<string, number[] | { postmaster: number }>;

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
  const pg = (await mon.query<{ pid: number }>('select pid from pg_stat_activity')).map((r) => r.pid);
  const ppid = pg.length > 0 ? statFields(pg[0]!)?.[1] : undefined;
  const postmaster = ppid ? Number(ppid) : undefined;
  groups.set('postgres', postmaster ? { postmaster } : pg);
  const pid = /process_id:(\d+)/.exec(await redis.info('server'))?.[1];
  if (pid) groups.set('redis', [Number(pid)]);
  return groups;
}

/** CPU ms used so far by each group (processes that are gone count 0). */
export function cpuMs(groups: ProcessGroups): Map<string, number> {
  const out = new Map<string, number>();
  const hz = ticksPerSecond();
  for (const [label, group] of groups) {
    let ticks = 0;
    if (Array.isArray(group)) {
      for (const pid of group) ticks += ownTicks(statFields(pid));
    } else {
      const pm = statFields(group.postmaster);
      // what exited children spent is added to the postmaster's cutime + cstime (fields 16 and 17) when it reaps them
      ticks += ownTicks(pm) + (pm ? Number(pm[13]) + Number(pm[14]) : 0);
      for (const pid of childrenOf(group.postmaster)) ticks += ownTicks(statFields(pid));
    }
    out.set(label, (ticks * 1000) / hz);
  }
  return out;
}

/** The fields of /proc/<pid>/stat from the state on (field 3 is [0]); undefined once the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    // the command name before them is in parentheses and may contain spaces
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime (fields 14 and 15). */
function ownTicks(fields: string[] | undefined): number {
  return fields ? Number(fields[11]) + Number(fields[12]) : 0;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
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
