/**
 * Where each process of the bench cluster spends its CPU, function by function: the V8 CPU
 * profiles the services write when started with `--cpu-prof` (`BENCH_CPU_PROFILE=<dir>`, see
 * flowline.ts) summed by self time over one section's time window, as a table per process.
 *
 * Self time of a function = the time between samples whose top frame is that function. A
 * profile's sample timestamps are microseconds of the host's monotonic clock, the clock
 * `process.hrtime` reads, so the bench can keep only the samples of the section it measured
 * (not the boot, nor the shutdown).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The members of a `.cpuprofile` (Chrome DevTools Profile) this module reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }[];
  /** µs, monotonic clock */
  startTime: number;
  endTime: number;
  /** node id of the top frame of each sample */
  samples: number[];
  /** µs since the previous sample (the first: since startTime) */
  timeDeltas: number[];
}

/** A window of the monotonic clock, in µs (`process.hrtime.bigint() / 1000n`). */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

export interface ProfileRow {
  /** `function path:line`, or `[package] function` for code under node_modules, or a V8 pseudo-frame such as `(garbage collector)` */
  name: string;
  selfMs: number;
}

export interface ProcessProfile {
  /** time the process was on a CPU in the window (every sample but `(idle)`) */
  busyMs: number;
  /** functions by self time, highest first */
  rows: ProfileRow[];
}

/**
 * Where a frame's time is counted: code under node_modules by package (one row per package,
 * named after the package's function that took most of it), everything else by function and
 * place, with paths from `rootDir` on.
 */
export function frameKey(frame: { functionName: string; url: string; lineNumber: number }, rootDir = ''): { key: string; fn: string } {
  const fn = frame.functionName || '(anonymous)';
  const nm = frame.url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = frame.url.slice(nm + '/node_modules/'.length).split('/');
    const pkg = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? '');
    return { key: `[${pkg}]`, fn };
  }
  if (!frame.url) return { key: fn, fn };
  let path = frame.url.replace(/^file:\/\//, '');
  if (rootDir && path.startsWith(`${rootDir}/`)) path = path.slice(rootDir.length + 1);
  return { key: `${fn} ${path}:${frame.lineNumber + 1}`, fn };
}

/** Sums the self time of each frame key over the samples inside `window` (all samples without one). */
export function selfTimes(profiles: readonly CpuProfile[], window?: ProfileWindow, rootDir = ''): ProcessProfile {
  const byKey = new Map<string, { us: number; fns: Map<string, number> }>();
  let busyUs = 0;
  for (const p of profiles) {
    const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
    let t = p.startTime;
    for (let i = 0; i < p.samples.length; i++) {
      t += p.timeDeltas[i] ?? 0;
      // a sample's time is the gap up to the next sample (V8's own attribution)
      const us = i + 1 < p.samples.length ? (p.timeDeltas[i + 1] ?? 0) : Math.max(0, p.endTime - t);
      if (window && (t < window.fromUs || t > window.toUs)) continue;
      const frame = frames.get(p.samples[i]!);
      if (!frame || frame.functionName === '(idle)') continue;
      const { key, fn } = frameKey(frame, rootDir);
      const entry = byKey.get(key) ?? { us: 0, fns: new Map<string, number>() };
      entry.us += us;
      entry.fns.set(fn, (entry.fns.get(fn) ?? 0) + us);
      byKey.set(key, entry);
      busyUs += us;
    }
  }
  const rows = [...byKey.entries()].map(([key, e]) => {
    if (!key.startsWith('[')) return { name: key, selfMs: e.us / 1000 };
    const top = [...e.fns.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
    return { name: `${key} ${top}`, selfMs: e.us / 1000 };
  });
  rows.sort((a, b) => b.selfMs - a.selfMs || a.name.localeCompare(b.name));
  return { busyMs: busyUs / 1000, rows };
}

/** Reads every `.cpuprofile` in `dir` (none when it does not exist). */
export function readProfiles(dir: string): CpuProfile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile);
}

/** One markdown table per process: its `top` functions by self time, with their share of its busy time. */
export function renderProfiles(title: string, byProcess: ReadonlyMap<string, ProcessProfile>, top = 15): string {
  const out: string[] = [`### ${title}`, ''];
  for (const [label, prof] of byProcess) {
    out.push(`**${label}**: ${prof.busyMs.toFixed(0)} ms on CPU in the window`, '', '| function (self time) | ms | % |', '|---|---|---|');
    for (const r of prof.rows.slice(0, top)) {
      const pct = prof.busyMs > 0 ? (100 * r.selfMs) / prof.busyMs : 0;
      out.push(`| ${r.name.replace(/\|/g, '\\|')} | ${r.selfMs.toFixed(1)} | ${pct.toFixed(1)} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
