/** The bench results document and its markdown rendering (pure). */
import type { CostRow, ChainResult, W3Result } from './workloads';
import { judgeRatio, judgeValue, quietEnough, relativeRange, type NoiseReport, type RatioJudgement } from './noise';
import type { W0Result } from './w0';
import type { W5Result, W6DelayedResult, W6TimerResult } from './w5-w6';
import type { PeerOutcome } from './peers';
import type { LanesResult } from './lanes';
import type { FairnessResult } from './fairness';
import type { W7Result, W7Side } from './w7';
import type { BurstResult } from './burst';
import type { CpuPerNode } from './hop-cpu';
import type { W8Result } from './w8';
import { fmt, fmtSpread, spread, type Spread } from './stats';
import { statementTable } from './statements';

export interface Machine {
  nproc: number;
  memoryGiB: number;
  cpuModel: string;
  node: string;
  postgres: string;
  postgresSetup: string;
  redis: string;
  loadAvgStart: number[];
  loadAvgEnd: number[];
}

export interface Results {
  startedAt: string;
  finishedAt: string;
  command: string;
  mode: 'quick' | 'default' | 'full';
  reps: number;
  machine: Machine;
  clusterEnv: Record<string, string>;
  w0: W0Result | null;
  /** lane overhead per call (tests/bench/lib/lanes.ts): tool and LLM lanes, each minus its direct call */
  lanes: LanesResult | null;
  w1: ChainResult[];
  w2: { k: number; latencyMs: Spread }[];
  w3: W3Result[];
  w4: { p50: number; p99: number; samples: number } | null;
  w5: W5Result | null;
  w6: { recoveryMs: Spread; completed: boolean; leaseMs: string; timers?: W6TimerResult; delayed?: W6DelayedResult } | null;
  cost: CostRow[];
  peers: PeerOutcome[];
  peersMissing: { peer: string; reason: string }[];
  /** live fan-out (tests/bench/live-fanout.ts): 2 API replicas, N sockets, R runs progressing */
  live: LiveFanout | null;
  /** the fairness workload (tests/bench/lib/fairness.ts) */
  fairness: FairnessResult | null;
  /** the replicas workload (tests/bench/lib/w7.ts) */
  w7?: W7Result | null;
  /** one tenant's burst of 1 MiB creates against another tenant's reads (tests/bench/lib/burst.ts) */
  burst?: BurstResult | null;
  /** W3 against W3 whose nodes each write one `append` state key, one after the other in one cluster */
  w3State?: W3StateResult | null;
  /** W8 "platform day" (tests/bench/lib/w8.ts) */
  w8?: W8Result | null;
  /** the host's load through the run and a fixed reference timed between sections */
  noise?: NoiseReport | null;
  /** BENCH_CPU_PROFILE: markdown tables of each process's functions by self time, per section (tests/bench/lib/cpu-profile.ts) */
  profiles?: string | null;
  errors: string[];
}

export interface W3StateResult {
  m: number;
  plain: { nodesPerSec: Spread; cpu?: CpuPerNode };
  state: { nodesPerSec: Spread; cpu?: CpuPerNode };
  /** all processes' CPU per succeeded node, state ÷ plain (target ≤ 1.15) */
  cpuRatio: number | null;
}

export interface LiveFanout {
  sockets: number;
  replicas: number;
  runs: number;
  seconds: number;
  mergeWindowMs: number;
  commitsPerSec: number;
  pingsPerSec: number;
  delayP50Ms: number;
  delayP95Ms: number;
}

type Metric = 'hopP50Ms' | 'hopP99Ms' | 'latencyMs' | 'nodesPerSec' | 'runsPerSec';

/** Flowline's figure for one peer comparison cell. */
export function flowlineFigure(r: Results, workload: string, param: number, metric: Metric): number | null {
  if (workload === 'W1') {
    const c = r.w1.find((x) => x.n === param);
    if (!c) return null;
    return metric === 'hopP50Ms' ? c.hopP50.median : metric === 'hopP99Ms' ? c.hopP99.median : null;
  }
  if (workload === 'W2')
    return metric === 'latencyMs' ? (r.w2.find((x) => x.k === param)?.latencyMs.median ?? null) : null;
  const c = r.w3.find((x) => x.m === param);
  if (!c) return null;
  return metric === 'nodesPerSec'
    ? c.nodesPerSec.median
    : metric === 'runsPerSec'
      ? c.runsPerSec.median
      : null;
}

const METRICS: Record<string, { metric: Metric; label: string; better: 'lower' | 'higher' }[]> = {
  W1: [
    { metric: 'hopP50Ms', label: 'hop p50 ms', better: 'lower' },
    { metric: 'hopP99Ms', label: 'hop p99 ms', better: 'lower' },
  ],
  W2: [{ metric: 'latencyMs', label: 'run latency ms', better: 'lower' }],
  W3: [
    { metric: 'nodesPerSec', label: 'nodes/s', better: 'higher' },
    { metric: 'runsPerSec', label: 'runs/s', better: 'higher' },
  ],
};

/** A peer's figure with its range when the runner lists per-repetition values (W2 latenciesMs, W3 secs). */
function peerSpread(o: PeerOutcome, metric: Metric): Spread {
  const v = o.line?.[metric] ?? NaN;
  const extra = (o.line?.extra ?? {}) as { latenciesMs?: number[]; secs?: number[] };
  if (metric === 'latencyMs' && extra.latenciesMs?.length) return spread(extra.latenciesMs);
  if ((metric === 'nodesPerSec' || metric === 'runsPerSec') && extra.secs?.length) {
    const mid = spread(extra.secs).median;
    return { ...spread(extra.secs.map((s) => (v * mid) / s)), median: v };
  }
  return { median: v, min: v, max: v, n: 1 };
}

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const verdict = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? '**met**' : '**not met**');

const judged = (v: RatioJudgement['verdict']) =>
  v === 'met' ? '**met**' : v === 'not met' ? '**not met**' : v === 'inconclusive' ? 'inconclusive (the repetitions straddle the target)' : 'not measured';

/** "1.39× (1.30–1.45): 5 (5–6) vs 3.61 (3.5–3.7) ms", or why the ratio is not recorded. */
function ratioCell(j: RatioJudgement, num: Spread | null | undefined, den: Spread | null | undefined, what: string): string {
  if (j.verdict === 'not measured') return 'n/a';
  const sides = `${fmtSpread(num ?? undefined)} vs ${fmtSpread(den ?? undefined)} ${what}`;
  const range = `${fmt(j.ratio)}× (${fmt(j.lo)}–${fmt(j.hi)})`;
  if (!j.recordable)
    return `not recorded: the repetitions disagree by ${fmt(j.disagreement * 100)}%, more than the ${fmt(j.gap * 100)}% gap claimed (${range}; ${sides})`;
  return `${range}: ${sides}`;
}

const one = (x: number | null | undefined): Spread | null =>
  x === null || x === undefined || !Number.isFinite(x) ? null : { median: x, min: x, max: x, n: 1 };

/** The speed issue's "Done when", each judged over the repetitions of both sides (tests/bench/lib/noise.ts). */
export function targets(r: Results): string[][] {
  const w1 = r.w1.find((x) => x.n === 100) ?? r.w1[r.w1.length - 1];
  const sf = r.w0?.shapeFloor ?? null;
  // the largest M with both a Flowline and a graphile-worker figure (peers run M=100 only under --quick)
  const gwW3 = (m: number) => r.peers.find((p) => p.peer === 'graphile-worker' && p.workload === 'W3' && p.param === m && p.line?.nodesPerSec);
  const w3 = [...r.w3].sort((a, b) => b.m - a.m).find((x) => gwW3(x.m)) ?? r.w3.find((x) => x.m === 1000) ?? r.w3[r.w3.length - 1];
  const gw = w3 ? gwW3(w3.m) : undefined;
  const gwSpread = gw ? peerSpread(gw, 'nodesPerSec') : null;
  const costW3 = r.cost.find((c) => c.workload.startsWith('W3') && c.workload.includes(String(w3?.m)));
  const tx = costW3?.perNode.writeXactsPerNode ?? null;
  const w5 = r.w5;
  const w6 = r.w6?.recoveryMs ?? null;
  const hop = judgeRatio(w1?.hopP50, sf?.hopP50, 1.15, 'lower');
  const cpu = judgeRatio(w1?.cpuPerHop, sf?.cpuPerHop, 1.25, 'lower');
  const p99 = judgeRatio(w1?.hopP99, sf?.hopP99, 2, 'lower');
  const w3Ratio = judgeRatio(w3?.nodesPerSec, gwSpread, 1.5, 'higher');
  const w4p50 = one(r.w4?.p50);
  const w4p99 = one(r.w4?.p99);
  return [
    [`W1 (N=${w1?.n ?? '?'}) hop p50 ≤ 1.15× the shape floor's`, ratioCell(hop, w1?.hopP50, sf?.hopP50, 'ms'), judged(hop.verdict)],
    [`W1 (N=${w1?.n ?? '?'}) CPU per hop ≤ 1.25× the shape floor's (all processes)`, ratioCell(cpu, w1?.cpuPerHop, sf?.cpuPerHop, 'ms'), judged(cpu.verdict)],
    [`W1 (N=${w1?.n ?? '?'}) hop p99 ≤ 2× the shape floor's`, ratioCell(p99, w1?.hopP99, sf?.hopP99, 'ms'), judged(p99.verdict)],
    [
      `W3 (M=${w3?.m ?? '?'}) nodes/s ≥ 1.5× graphile-worker's`,
      gw ? ratioCell(w3Ratio, w3?.nodesPerSec, gwSpread, 'nodes/s') : 'n/a (no graphile-worker figure)',
      judged(w3Ratio.verdict),
    ],
    [
      `W3 (M=${w3?.m ?? '?'}) CPU per succeeded node ≤ 1.3 ms (all processes)`,
      w3?.cpuPerNode ? `${fmtSpread(w3.cpuPerNode)} ms` : 'n/a',
      judged(judgeValue(w3?.cpuPerNode, 1.3, 'lower')),
    ],
    [`W4 POST → first Tool pickup p50 ≤ 5 ms (${r.w4?.samples ?? '?'} starts)`, w4p50 ? `${fmt(w4p50.median)} ms` : 'n/a', judged(judgeValue(w4p50, 5, 'lower'))],
    [`W4 POST → first Tool pickup p99 ≤ 15 ms`, w4p99 ? `${fmt(w4p99.median)} ms` : 'n/a', judged(judgeValue(w4p99, 15, 'lower'))],
    [
      `≤ 1.5 Postgres transactions per node (W3 M=${w3?.m ?? '?'})`,
      `${fmt(tx)} write tx/node (all commits incl. read-only: ${fmt(costW3?.perNode.xactsPerNode ?? null)})`,
      verdict(tx === null ? null : tx <= 1.5),
    ],
    [
      `W5 per-hop p50 within 10% of unparked (${w5?.phases[1]?.parked ?? '?'} parked)`,
      w5 ? `${fmt(w5.phases[1]!.hopP50)} vs ${fmt(w5.phases[0]!.hopP50)} ms (${fmt(w5.hopP50Change * 100)}%)` : 'n/a',
      verdict(w5 ? w5.hopP50Change <= 0.1 : null),
    ],
    [
      `W5 ≤ 1 query/s per dispatcher spent on parked runs`,
      w5 ? `${fmt(w5.parkedQueriesPerSecPerDispatcher)} ${w5.unit}/s` : 'n/a',
      verdict(w5 ? w5.parkedQueriesPerSecPerDispatcher <= 1 : null),
    ],
    [
      `W5 ≤ 1 query/s per dispatcher spent on runs parked on Wait PT1H (${w5?.phases[2]?.parked ?? '?'})`,
      w5 ? `${fmt(w5.timerParkedQueriesPerSecPerDispatcher)} ${w5.unit}/s (hop p50 ${fmt(w5.timerHopP50Change * 100)}%)` : 'n/a',
      verdict(w5 ? w5.timerParkedQueriesPerSecPerDispatcher <= 1 : null),
    ],
    [
      `W5 ≤ 1 query/s per dispatcher spent on runs Scheduled an hour ahead (${w5?.phases[3]?.parked ?? '?'})`,
      w5?.phases[3] ? `${fmt(w5.delayedQueriesPerSecPerDispatcher)} ${w5.unit}/s` : 'n/a',
      verdict(w5?.phases[3] ? w5.delayedQueriesPerSecPerDispatcher <= 1 : null),
    ],
    [
      `W8 engine overhead per node p99 ≤ 50 ms (${r.w8 ? `${r.w8.sizes.runs} runs, ${r.w8.sizes.tenants} tenants` : '?'})`,
      r.w8 ? `p99 ${fmt(r.w8.overhead.p99Ms)} ms (p50 ${fmt(r.w8.overhead.p50Ms)})` : 'n/a',
      judged(judgeValue(one(r.w8?.overhead.p99Ms), 50, 'lower')),
    ],
    [
      `W8 dispatcher memory per parked run ≤ 2 KiB`,
      r.w8?.parkedMemory ? `${fmt(r.w8.parkedMemory.heapBytesPerRun / 1024)} KiB of live heap (${r.w8.parkedMemory.runs} parked)` : 'n/a',
      judged(judgeValue(one(r.w8?.parkedMemory ? r.w8.parkedMemory.heapBytesPerRun / 1024 : null), 2, 'lower')),
    ],
    [`W6 recovery ≤ 5 s`, w6 ? `${fmtSpread(w6)} ms` : 'n/a', judged(judgeValue(w6, 5000, 'lower'))],
    [
      `W6 a Wait PT2S wakes ≤ 1 s late at p99 across a kill -9 of its dispatcher (${r.w6?.timers?.runs ?? '?'} runs)`,
      r.w6?.timers ? `p99 ${fmt(r.w6.timers.lateP99)} ms (p50 ${fmt(r.w6.timers.lateP50)}, max ${fmt(r.w6.timers.lateMax)})` : 'n/a',
      verdict(r.w6?.timers ? r.w6.timers.lateP99 <= 1000 && r.w6.timers.completed : null),
    ],
    [
      `W6 a delayed start begins ≤ 1 s after its startAt at p99 across a kill -9 of its dispatcher (${r.w6?.delayed?.runs ?? '?'} runs)`,
      r.w6?.delayed ? `p99 ${fmt(r.w6.delayed.lateP99)} ms (p50 ${fmt(r.w6.delayed.lateP50)}, max ${fmt(r.w6.delayed.lateMax)})` : 'n/a',
      verdict(r.w6?.delayed ? r.w6.delayed.lateP99 <= 1000 && r.w6.delayed.completed : null),
    ],
  ];
}

/** The host's noise beside the figures: load through the run, and a fixed reference timed between sections. */
export function renderNoise(n: NoiseReport): string[] {
  const q = quietEnough(n);
  const pct = (s: Spread) => `${fmt(relativeRange(s) * 100)}%`;
  return [
    '## Host noise',
    '',
    table(
      ['measure', 'figure', 'spread (max − min) ÷ median'],
      [
        [
          `one-minute load average, ${n.load.samples} samples`,
          `min ${fmt(n.load.min)}, mean ${fmt(n.load.mean)}, max ${fmt(n.load.max)}; above ${n.load.limit}: ${fmt(n.load.shareAbove * 100)}%`,
          '',
        ],
        [`CPU reference: SHA-256 of 32 MiB, once per section (${n.reference.length})`, `${fmtSpread(n.cpu)} ms`, pct(n.cpu)],
        [`Postgres reference: median of 200 \`select 1\` round trips, once per section`, `${fmtSpread(n.pgRoundTrip)} ms`, pct(n.pgRoundTrip)],
      ],
    ),
    '',
    q.ok
      ? 'Quiet enough to record: the load stayed under its limit and the references held within 25%.'
      : `**Too noisy to record** (--record refuses): ${q.why.join('; ')}.`,
    '',
  ];
}

export function renderMarkdown(r: Results): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(`# Flowline bench — ${r.startedAt} (${r.mode}, ${r.reps} repetition${r.reps > 1 ? 's' : ''})`, '');
  out.push(
    `Machine: ${m.nproc} cores (${m.cpuModel}), ${fmt(m.memoryGiB)} GiB, Node ${m.node}, Postgres ${m.postgres}, Redis ${m.redis}; ` +
      `load average at start ${m.loadAvgStart.map((x) => x.toFixed(2)).join(' / ')}, at end ${m.loadAvgEnd.map((x) => x.toFixed(2)).join(' / ')}.`,
    `Postgres: ${m.postgresSetup}. Cluster: API + ${r.clusterEnv.DISPATCHERS ?? 2} dispatchers + 1 tool worker as separate processes; env ${Object.entries(
      r.clusterEnv,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}.`,
    `Figures are medians of the repetitions with (min–max).`,
    '',
  );
  if (r.noise) out.push(...renderNoise(r.noise));
  out.push(
    '## Targets (the speed issue\'s "Done when")',
    '',
    'Ratios are medians ÷ medians, with the range over every pairing of the two sides\' repetitions; a verdict holds only when the whole range lies on one side of the target.',
    '',
    table(['target', 'measured', 'verdict'], targets(r)),
    '',
  );

  if (r.w0) {
    out.push('## W0 physical references', '');
    const rows: string[][] = [];
    for (const f of r.w0.insertCommit)
      rows.push([
        `pgbench one-insert commit, ${f.clients} client(s)`,
        `${fmt(f.tps)} tx/s`,
        `${fmt(f.latencyMs)} ms`,
      ]);
    if (r.w0.tpcb)
      rows.push([
        `pgbench TPC-B, ${r.w0.tpcb.clients} clients`,
        `${fmt(r.w0.tpcb.tps)} tx/s`,
        `${fmt(r.w0.tpcb.latencyMs)} ms`,
      ]);
    for (const x of r.w0.redis)
      rows.push([
        `redis-benchmark ${x.command} (20 clients)`,
        `${fmt(x.rps)} req/s`,
        x.p50Ms === null ? '' : `p50 ${fmt(x.p50Ms)} ms`,
      ]);
    const cpuRow = (c: CpuPerNode) =>
      `${Object.entries(c.byProcess).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')} · all ${fmt(c.totalMs)}`;
    const ne = r.w0.nullEngine;
    if (ne) {
      rows.push([
        'null engine, one chain (UPDATE + BullMQ add + pickup per node, one process)' + (ne.cpu ? '; CPU ms per hop' : ''),
        ne.cpu ? cpuRow(ne.cpu) : '',
        `hop p50 ${fmt(ne.hopP50Ms)} ms, p99 ${fmt(ne.hopP99Ms)} ms`,
      ]);
      rows.push([`null engine, ${ne.chains} chains at once`, `${fmt(ne.nodesPerSec)} nodes/s`, '']);
    }
    const bw = r.w0.bareWorker;
    if (bw) {
      // the tool worker's CPU per W1 hop (one echo job each), same run
      const w1Tool = r.w1.map((w) => w.cpu?.byProcess['worker-tool-1']).filter((x): x is number => typeof x === 'number');
      rows.push([
        `bare BullMQ worker, echo job, own process, concurrency ${bw.concurrency} (${bw.jobs} jobs one at a time)`,
        `CPU ${fmt(bw.cpuMsPerJob)} ms per job`,
        w1Tool.length ? `tool worker in W1: ${w1Tool.map((x) => `${fmt(x)} ms (${fmt(x / bw.cpuMsPerJob)}×)`).join(', ')} per hop` : '',
      ]);
    }
    const sf = r.w0.shapeFloor;
    if (sf) {
      const gw = r.peers.find((p) => p.peer === 'graphile-worker' && p.workload === 'W1' && p.param === 100)?.line?.hopP50Ms;
      rows.push([
        `shape floor, one chain of ${sf.hops}: worker process (BullMQ) → report → owner process (one UPDATE commit + BullMQ add) → pickup; CPU ms per hop`,
        cpuRow(sf.cpu),
        `hop p50 ${fmt(sf.hopP50Ms)} ms, p99 ${fmt(sf.hopP99Ms)} ms${gw ? ` (graphile-worker W1 N=100 p50 ${fmt(gw)} ms: ${fmt(sf.hopP50Ms / gw)}×)` : ''}`,
      ]);
      rows.push([
        `shape floor, ${sf.chains} chains at once; CPU ms per node`,
        `${fmt(sf.nodesPerSec)} nodes/s · ${cpuRow(sf.cpuBatched)}`,
        '',
      ]);
    }
    out.push(table(['reference', 'throughput', 'latency'], rows), '');
    for (const n of r.w0.notes) out.push(`- ${n}`);
    out.push('');
  }

  if (r.lanes) out.push(...renderLanes(r.lanes));

  out.push('## Flowline workloads (real cluster, echo Tool nodes)', '');
  const fl: string[][] = [];
  for (const c of r.w1) {
    fl.push([
      `W1 chain N=${c.n}`,
      'hop p50 / p99 ms (pickup → pickup)',
      `${fmtSpread(c.hopP50)} / ${fmtSpread(c.hopP99)}`,
    ]);
    fl.push([`W1 chain N=${c.n}`, 'run (finished − created) ÷ (N+1) ms', fmtSpread(c.runPerHop)]);
    fl.push([
      `W1 chain N=${c.n}`,
      'hop breakdown, median ms: echo in worker · result → next tick begins · tick begins → next pickup',
      `${fmt(c.breakdown.execMs)} · ${fmt(c.breakdown.tickMs)} · ${fmt(c.breakdown.queueMs)}`,
    ]);
    if (c.cpu) {
      fl.push([
        `W1 chain N=${c.n}`,
        'CPU ms per hop by process (/proc) · all processes · wall ms per hop · cores busy (CPU ÷ wall)',
        `${cpuParts(c.cpu.byProcess)} · ${c.cpu.totalMs.toFixed(2)} · ${c.cpu.wallMs.toFixed(2)} · ${(c.cpu.totalMs / c.cpu.wallMs).toFixed(2)}`,
      ]);
    }
  }
  for (const c of r.w2) fl.push([`W2 fan-out/fan-in K=${c.k}`, 'run latency ms', fmtSpread(c.latencyMs)]);
  for (const c of r.w3) {
    fl.push([
      `W3 canonical, M=${c.m} concurrent`,
      'runs/s · nodes/s (succeeded nodes)',
      `${fmtSpread(c.runsPerSec)} · ${fmtSpread(c.nodesPerSec)}`,
    ]);
    if (c.cpu)
      fl.push([
        `W3 canonical, M=${c.m} concurrent`,
        'CPU ms per succeeded node by process (/proc, over every repetition, its POSTs and decisions included) · all processes',
        `${cpuParts(c.cpu.byProcess)} · ${c.cpu.totalMs.toFixed(2)}`,
      ]);
  }
  if (r.w4)
    fl.push([
      `W4 start latency (${r.w4.samples} runs)`,
      'POST → first Tool node picked up, p50 / p99 ms',
      `${fmt(r.w4.p50)} / ${fmt(r.w4.p99)}`,
    ]);
  if (r.w5) {
    for (const p of r.w5.phases) {
      fl.push([
        `W5 100 chains N=10, ${p.on === 'none' ? 'none parked' : `${p.parked} parked on ${p.on}`}`,
        `hop p50 / p99 ms · ${r.w5.unit}/s active · idle`,
        `${fmt(p.hopP50)} / ${fmt(p.hopP99)} · ${fmt(p.activeQueriesPerSec)} · ${fmt(p.idleQueriesPerSec)}`,
      ]);
    }
    fl.push([
      'W5 parked-run cost',
      `${r.w5.unit}/s per dispatcher (idle with − without): on a Pause · on Wait PT1H${r.w5.phases[3] ? " · Scheduled PT1H ahead" : ""}`,
      `${fmt(r.w5.parkedQueriesPerSecPerDispatcher)} · ${fmt(r.w5.timerParkedQueriesPerSecPerDispatcher)}${r.w5.phases[3] ? ` · ${fmt(r.w5.delayedQueriesPerSecPerDispatcher)}` : ''}`,
    ]);
  }
  if (r.w6)
    fl.push([
      `W6 kill -9 of the owning dispatcher (SHARD_LEASE_MS=${r.w6.leaseMs})`,
      'ms to the first admission on its shards',
      `${fmtSpread(r.w6.recoveryMs)}${r.w6.completed ? '' : ' (some runs did not complete!)'}`,
    ]);
  if (r.w6?.timers)
    fl.push([
      `W6 timers: ${r.w6.timers.runs} runs on Wait PT2S, kill -9 of their main owner a second in`,
      'ms late after the due time, p50 / p99 / max',
      `${fmt(r.w6.timers.lateP50)} / ${fmt(r.w6.timers.lateP99)} / ${fmt(r.w6.timers.lateMax)}${r.w6.timers.completed ? '' : ' (some runs did not complete!)'}`,
    ]);
  if (r.w6?.delayed)
    fl.push([
      `W6 delayed starts: ${r.w6.delayed.runs} runs with one startAt, kill -9 of their main owner 50 ms before it`,
      'ms started after startAt, p50 / p99 / max',
      `${fmt(r.w6.delayed.lateP50)} / ${fmt(r.w6.delayed.lateP99)} / ${fmt(r.w6.delayed.lateMax)}${r.w6.delayed.completed ? '' : ' (some runs did not complete!)'}`,
    ]);
  out.push(table(['workload', 'figure', 'value'], fl), '');

  out.push('## Cost per node (succeeded nodes; bench queries subtracted)', '');
  out.push(
    "Write tx = transaction-id delta of the own server (exact). Commits = pg_stat_database xact_commit delta, which backends report up to ~10 s late, so small windows are unreliable. Every window includes the cluster's background work (lease renewals, sweeps, BullMQ blocking polls).",
    '',
  );
  out.push(
    table(
      [
        'workload',
        'nodes',
        'PG write tx/node',
        'PG commits/node (incl. read-only)',
        'PG statements/node',
        'of them sent by clients',
        'WAL bytes/node',
        'Redis cmds/node',
      ],
      r.cost.map((c) => [
        c.workload,
        String(c.perNode.nodes),
        fmt(c.perNode.writeXactsPerNode),
        fmt(c.perNode.xactsPerNode),
        fmt(c.perNode.statementsPerNode),
        fmt(c.perNode.topStatementsPerNode),
        fmt(c.perNode.walBytesPerNode),
        fmt(c.perNode.redisCommandsPerNode),
      ]),
    ),
    '',
  );

  for (const c of r.cost.filter((x) => x.statements?.length)) {
    out.push(
      `### Top statements: ${c.workload}`,
      '',
      'pg_stat_statements over the window, by total time; nested = run inside a plpgsql function (not a round trip).',
      '',
      ...statementTable(c.statements!),
      '',
    );
  }

  out.push('## Peers side by side (same machine, same run, own Postgres/Redis)', '');
  const peerNames = [...new Set(r.peers.map((p) => p.peer))].sort();
  if (peerNames.length === 0) out.push('No peer ran.', '');
  else {
    const rows: string[][] = [];
    const cells = [...new Set(r.peers.map((p) => `${p.workload}:${p.param}`))];
    for (const cell of cells) {
      const [w, ps] = cell.split(':') as [string, string];
      const param = Number(ps);
      for (const met of METRICS[w] ?? []) {
        const f = flowlineFigure(r, w, param, met.metric);
        const row = [
          `${w} ${w === 'W1' ? 'N' : w === 'W2' ? 'K' : 'M'}=${param}`,
          `${met.label} (${met.better} is better)`,
          fmt(f),
        ];
        for (const peer of peerNames) {
          const o = r.peers.find((p) => p.peer === peer && p.workload === w && p.param === param);
          if (!o) row.push('—');
          else if (o.error || !o.line)
            row.push(`n/a (${(o.error ?? 'no figure').replace(/\|/g, '/').slice(0, 120)})`);
          else {
            const v = o.line[met.metric] ?? null;
            const ratio = f !== null && Number.isFinite(f) && v ? f / v : null;
            row.push(
              v === null
                ? 'n/a'
                : `${fmtSpread(peerSpread(o, met.metric))} → **${ratio === null ? 'n/a' : `${fmt(ratio)}×`}**`,
            );
          }
        }
        rows.push(row);
      }
    }
    out.push(
      table(
        [
          'workload',
          'figure',
          'Flowline',
          ...peerNames.map((p) => `${p}${/bullmq/i.test(p) ? ' (not durable)' : ''}: figure → Flowline/peer`),
        ],
        rows,
      ),
      '',
    );
    out.push(
      "Peer figures: the median the peer runner reports over its `--reps` repetitions, with (min–max) where the runner lists each repetition (W2, W3). Ratios are Flowline ÷ peer: below 1 is better for latencies, above 1 for throughput. Each peer's own notes (what a hop is, its tuning, its Postgres transactions per node) are in `results/latest.json`.",
      '',
    );
  }
  for (const p of r.peersMissing) out.push(`- peer ${p.peer}: n/a (${p.reason})`);
  if (r.live) {
    const l = r.live;
    out.push(
      '',
      '## Live channel fan-out',
      '',
      `${l.sockets} subscribed sockets on ${l.replicas} API replicas, ${l.runs} runs progressing for ${l.seconds} s ` +
        `(${l.commitsPerSec} commits/s; pings merged per run within ${l.mergeWindowMs} ms):`,
      '',
      '| pings delivered/s | commit → receipt p50 | p95 |',
      '|---|---|---|',
      `| ${l.pingsPerSec} | ${l.delayP50Ms} ms | ${l.delayP95Ms} ms |`,
    );
  }
  if (r.w7) out.push('', ...renderW7(r.w7));
  if (r.fairness) out.push('', ...renderFairness(r.fairness));
  if (r.burst) out.push('', ...renderBurst(r.burst));
  if (r.w8) out.push('', ...renderW8(r.w8));
  if (r.w3State) out.push('', ...renderW3State(r.w3State));
  if (r.profiles) out.push('', '## CPU profiles (BENCH_CPU_PROFILE)', '', r.profiles);
  if (r.errors.length) {
    out.push('', '## Errors', '');
    for (const e of r.errors) out.push(`- ${e}`);
  }
  return `${out.join('\n')}\n`;
}

/** `label ms` per process, by label. */
const cpuParts = (byProcess: Record<string, number>) =>
  Object.entries(byProcess)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');

/** The replicas section (the W7 goals). */
function renderW7(w: W7Result): string[] {
  const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
  const row = (s: W7Side) => [
    `${s.dispatchers} dispatcher(s) + ${s.apis} API${s.sockets ? ` (${s.sockets} sockets on unrelated runs on the last)` : ''}`,
    `${fmt(s.w1.hopP50Ms)} ms · ${s.w1.cpu.totalMs.toFixed(2)} ms (${cpuParts(s.w1.cpu.byProcess)})`,
    s.w1.nonOwnerMaxMs === null ? '–' : `${s.w1.nonOwnerMaxMs.toFixed(2)} ms (its idle rate alone: ${(s.w1.nonOwnerIdleMs ?? 0).toFixed(2)} ms)`,
    cpuParts(s.idleMsPerSec),
    `${fmt(s.w3.nodesPerSec)} · ${s.w3.cpu.totalMs.toFixed(2)} ms (${cpuParts(s.w3.cpu.byProcess)})`,
  ];
  const nonOwner = w.large.w1.nonOwnerMaxMs;
  return [
    `## W7 replicas: W1 N=${w.small.w1.n} and W3 M=${w.small.w3.m}, 1 + 1 against 4 dispatchers + 3 API replicas`,
    '',
    'CPU from /proc over the measured runs (background work of every replica included), per W1 hop and per W3 succeeded node; ' +
      'the idle rate of each process is read over 5 s before W1 (a loaded host stretches the wall time of a hop, and the background work over it).',
    '',
    table(['cluster', 'W1 hop p50 · CPU ms per hop, all processes (by process)', 'W1 CPU per hop of a dispatcher owning none of the chains\' shards (max)', 'idle cluster, CPU ms per second by process', 'W3 nodes/s · CPU ms per node, all processes (by process)'], [row(w.small), row(w.large)]),
    '',
    table(
      ['target', 'measured', 'verdict'],
      [
        ['W1 CPU per hop, 4 + 3 ÷ 1 + 1 ≤ 1.1×', `${w.w1CpuRatio.toFixed(2)}×`, verdict(w.w1CpuRatio <= 1.1)],
        ['W3 CPU per node, 4 + 3 ÷ 1 + 1 ≤ 1.1×', `${w.w3CpuRatio.toFixed(2)}×`, verdict(w.w3CpuRatio <= 1.1)],
        ['non-owning dispatcher ≤ 0.1 ms CPU per W1 hop', nonOwner === null ? 'n/a' : `${nonOwner.toFixed(2)} ms`, nonOwner === null ? 'n/a' : verdict(nonOwner <= 0.1)],
      ],
    ),
  ];
}

/** The run-state section: what one `append` write per node costs the hop. */
function renderW3State(w: W3StateResult): string[] {
  const cpu = (c?: CpuPerNode) => (c ? `${c.totalMs.toFixed(2)} ms (${cpuParts(c.byProcess)})` : 'n/a');
  return [
    `## Run state: W3 M=${w.m} with one \`append\` write per node against plain W3 (same cluster, one after the other)`,
    '',
    table(
      ['variant', 'nodes/s', 'CPU per succeeded node, all processes'],
      [
        ['W3', fmtSpread(w.plain.nodesPerSec), cpu(w.plain.cpu)],
        ['W3 + state', fmtSpread(w.state.nodesPerSec), cpu(w.state.cpu)],
      ],
    ),
    '',
    table(
      ['target', 'measured', 'verdict'],
      [['W3 + state CPU per node ≤ 1.15× W3', w.cpuRatio === null ? 'n/a' : `${fmt(w.cpuRatio)}×`, verdict(w.cpuRatio === null ? null : w.cpuRatio <= 1.15)]],
    ),
  ];
}

/** The burst section (a tenant's 1 MiB creates against another tenant's reads). */
export function renderW8(w: W8Result): string[] {
  const z = w.sizes;
  const rows: string[][] = [
    ['runs completed', `${w.completed} of ${z.runs}${Object.keys(w.notCompleted).length ? ` (${Object.entries(w.notCompleted).map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`],
    ['sustained nodes/s (last three quarters of the posting window)', fmt(w.sustainedNodesPerSec)],
    [`nodes/s over the day (first POST → last finish, ${fmt(w.daySeconds)} s)`, fmt(w.dayNodesPerSec)],
    [
      'engine overhead per node: predecessor finished → job picked, p50 / p99 ms',
      `${fmt(w.overhead.p50Ms)} / ${fmt(w.overhead.p99Ms)} (${Object.entries(w.overhead.byNode).map(([k, v]) => `${k} ${fmt(v.p50Ms)} / ${fmt(v.p99Ms)}`).join('; ')}; ${w.overhead.samples} nodes)`,
    ],
    ['CPU ms per succeeded node, all processes', w.cpu ? `${fmt(w.cpu.totalMs)} (${cpuParts(w.cpu.byProcess)})` : 'n/a'],
    ['Postgres statements per succeeded node', fmt(w.statementsPerNode)],
    ['Redis commands per succeeded node', fmt(w.redisCommandsPerNode)],
    ['fairness: slowest ÷ fastest tenant median POST → first node picked', `${fmt(w.fairness.ratio)}× (${fmt(w.fairness.slowestMs)} vs ${fmt(w.fairness.fastestMs)} ms over ${w.fairness.tenants} tenants)`],
    [
      'dispatchers\' memory per parked run: live heap after a full collection (resident set beside it)',
      w.parkedMemory
        ? `${fmt(w.parkedMemory.heapBytesPerRun / 1024)} KiB (${fmt(w.parkedMemory.heapBeforeMiB)} → ${fmt(w.parkedMemory.heapAfterMiB)} MiB with ${w.parkedMemory.runs} more parked; resident set ${fmt(w.parkedMemory.rssBytesPerRun / 1024)} KiB per run)`
        : 'n/a',
    ],
  ];
  return [
    '## W8 platform day',
    '',
    `${z.runs} runs over ${z.tenants} tenants posted across ${z.postSeconds} s: Start → LlmCall (fake provider, ${w.llmMs[0]}–${w.llmMs[1]} ms) → Tool echo → Condition → Pause on half the runs (approved ${z.decideAfterMs / 1000} s after it waits, with the tenant's key) → End; API, 2 dispatchers, a tool worker and an LLM worker (lane concurrency 500). No peer runs this shape: their runners here have no LLM lane.`,
    '',
    table(['figure', 'value'], rows),
    '',
  ];
}

export function renderBurst(b: BurstResult): string[] {
  const verdict = (ok: boolean) => (ok ? '**met**' : '**not met**');
  const answers = (a: Record<string, number>) =>
    Object.entries(a)
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([k, n]) => `${n} × ${k}`)
      .join(', ');
  return [
    '## One tenant\'s burst against another tenant\'s reads',
    '',
    `Per round, tenant A sends ${b.creates} \`POST /v1/definitions\` at once (valid ${b.nodes}-node fan-outs, ${fmt(b.bodyBytes / 1024)} KiB bodies); ` +
      'tenant B starts a `GET /v1/runs?limit=20` every 50 ms throughout (open loop). One API with its default admission bounds, rate limits and pool of 10.',
    '',
    table(
      ['round', "A's answers", 'burst wall time', "B's reads", "B's read p50 / p99 / max", '0 × 5xx', "B's p99 ≤ 1 s"],
      b.rounds.map((r, i) => [
        String(i + 1),
        answers(r.answers),
        `${fmt(r.burstMs / 1000)} s`,
        String(r.reads),
        `${fmt(r.readP50Ms)} / ${fmt(r.readP99Ms)} / ${fmt(r.readMaxMs)} ms`,
        verdict(r.fiveXx === 0),
        verdict(r.readP99Ms <= 1000),
      ]),
    ),
    '',
  ];
}

/** The fairness section (a tenant's burst against another tenant's runs). */
export function renderFairness(f: FairnessResult): string[] {
  const w = f.weights;
  return [
    '## Fairness across tenants',
    '',
    `Runs of Start → three \`wait\` Tool calls of ${f.callMs} ms → End; tenant A posts ${f.aRuns} runs at once, then tenant B ${f.bRuns}; ` +
      `dispatch window LANE_WINDOW_TOOL=${f.laneWindow}. Start → first node: the bench's clock before each POST → its first Tool node's pickup.`,
    '',
    table(
      ['goal', 'figure', 'verdict'],
      [
        [
          "B's start → first node p95 within 2× of B alone",
          `${fmt(f.bBehindA.p95Ms)} ms behind A vs ${fmt(f.bAlone.p95Ms)} ms alone (${fmt(f.bP95Ratio)}×; p50 ${fmt(f.bBehindA.p50Ms)} vs ${fmt(f.bAlone.p50Ms)} ms)`,
          verdict(f.bP95Ratio <= 2),
        ],
        [
          'cluster nodes/s with B within 10% of A alone',
          `${fmt(f.aWithBNodesPerSec)} vs ${fmt(f.aAloneNodesPerSec)} nodes/s (${fmt(f.throughputRatio)}×; means of the alternated phases: A alone ${f.aAlonePhases.map(fmt).join(', ')}; A + B ${f.aWithBPhases.map(fmt).join(', ')})`,
          verdict(f.throughputRatio >= 0.9),
        ],
        [
          `weights ${w.spec}: completed-node share within 10% of 3:1 over a busy window`,
          `${w.heavyNodes} : ${w.lightNodes} over ${fmt(w.windowS)} s (share ${fmt(w.heavyShare)} vs 0.75)`,
          verdict(w.heavyNodes + w.lightNodes > 0 && Math.abs(w.heavyShare - 0.75) <= 0.075),
        ],
      ],
    ),
    '',
  ];
}

/** The "Lane overhead per call" section. */
export function renderLanes(l: LanesResult): string[] {
  const row = (name: string, f: LanesResult['tool'], work: string) => [
    name,
    work,
    `${fmt(f.directP50Ms)} / ${fmt(f.directP99Ms)}`,
    `${fmt(f.laneP50Ms)} / ${fmt(f.laneP99Ms)}`,
    `**${fmt(f.overheadP50Ms)} / ${fmt(f.overheadP99Ms)}**`,
  ];
  return [
    '## Lane overhead per call',
    '',
    `One call at a time, ${l.calls} calls per lane after ${l.warmup} warm-up calls, lane and direct calls alternating; ` +
      'lane = BullMQ job → in-process lane worker → the work → the worker\'s outcome report on the wake channel; overhead = lane − direct at the same percentile. ' +
      `The LLM lane includes provider admission (limit ${l.llmAdmissionLimit}), the activity feed and the admission report; the fake server answers at once.`,
    '',
    table(
      ['lane', 'work (direct call)', 'direct p50 / p99 ms', 'through the lane p50 / p99 ms', 'overhead p50 / p99 ms'],
      [
        row('tool', l.tool, '`echo` on the tool registry'),
        row('llm', l.llm, 'chat completion to the fake OpenAI-compatible server (the worker’s client)'),
      ],
    ),
    '',
    `LLM-lane overhead ÷ tool-lane overhead: ${fmt(l.ratioP50)}× at p50, ${fmt(l.ratioP99)}× at p99.`,
    '',
  ];
}

export { spread };
