import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TERMINAL_RUN_STATUSES, type Graph } from '../model';
import { applyPlanToSnapshot } from '../planner/apply';
import { plan } from '../planner/plan';
import { contextAt, dagOf, edge, node, snapshotOf } from '../planner/test-kit';
import type { RunSnapshot, WorkItem, WorkOutcome } from '../planner/types';
import { migrateSnapshot } from './apply-migration';
import { planMigration } from './migration-plan';

interface Spec {
  parents: number[][];
  conds: (null | number)[][];
  any: boolean[];
  onError: boolean[];
  /** per node: outcomes by attempt, 0/1 = succeed with v, 2 = fail */
  outcomes: number[][];
  /** per node: deliver the result on the step after queueing (true) or first report it started (false) */
  lag: boolean[];
}

const specArb: fc.Arbitrary<Spec> = fc.integer({ min: 1, max: 7 }).chain((n) => {
  const list = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: n, maxLength: n });
  return fc.record({
    parents: list(fc.array(fc.nat(), { minLength: 1, maxLength: 2 })),
    conds: list(fc.array(fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 0, max: 1 })), { minLength: 2, maxLength: 2 })),
    any: list(fc.boolean()),
    onError: list(fc.boolean()),
    outcomes: list(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 3, maxLength: 3 })),
    lag: list(fc.boolean()),
  });
});

/** Start `n0`, Tool nodes n1..nk over random earlier parents (conditions on `output.v`), one End `end` after every leaf. */
function buildGraph(spec: Spec): Graph {
  return dagOf(
    spec.parents,
    (i, p, j) => {
      const c = spec.conds[i - 1]![j] ?? null;
      return { condition: p > 0 && c !== null ? { path: 'output.v', op: 'Eq', value: c } : null };
    },
    (i, parentCount) =>
      node(`n${i}`, 'Tool', {
        joinPolicy: parentCount >= 2 && spec.any[i - 1] ? 'Any' : 'All',
        onError: spec.onError[i - 1] ? 'Continue' : 'FailRun',
        maxAttempts: 2,
        timeoutSeconds: 1000,
        retryBackoff: { initialMs: 10, multiplier: 2, maxMs: 100 },
        config: { toolName: 'echo' },
      }),
  );
}

function outcomeOf(spec: Spec, item: Pick<WorkItem, 'nodeKey' | 'attempt'>, now: number): WorkOutcome {
  const i = Number(item.nodeKey.slice(1)) - 1;
  const o = Number.isInteger(i) && i >= 0 ? (spec.outcomes[i]?.[item.attempt - 1] ?? 0) : 0;
  return o === 2
    ? { ok: false, failureClass: 'NodeFailed', reason: 'scripted', startedAt: now, finishedAt: now }
    : { ok: true, output: { v: o }, startedAt: now, finishedAt: now };
}

interface Drive {
  snap: RunSnapshot;
  /** work queued and not yet answered, with whether it was reported started */
  outstanding: { item: WorkItem; started: boolean }[];
  now: number;
}

/**
 * One driver step: every outstanding item either reports its result, or (a lagging node not yet
 * started) reports it started and answers on a later step; then plan and apply.
 */
function stepOnce(spec: Spec, d: Drive): Drive {
  const results = [];
  const started = [];
  const still: Drive['outstanding'] = [];
  for (const o of d.outstanding) {
    const i = Number(o.item.nodeKey.slice(1)) - 1;
    if (!o.started && spec.lag[i]) {
      started.push({ invocationId: o.item.invocationId, nodeKey: o.item.nodeKey, at: d.now });
      still.push({ item: o.item, started: true });
    } else results.push({ invocationId: o.item.invocationId, nodeKey: o.item.nodeKey, outcome: outcomeOf(spec, o.item, d.now) });
  }
  const snap = { ...d.snap, results: [...d.snap.results, ...results], started: [...d.snap.started, ...started] };
  const r = plan(snap, contextAt(d.now, {}, `i${d.now}`));
  return { snap: applyPlanToSnapshot(snap, r), outstanding: [...still, ...r.enqueue.map((item) => ({ item, started: false }))], now: Math.max(d.now + 1, r.wakeAt ?? d.now + 1) };
}

function driveSteps(spec: Spec, d: Drive, steps: number): Drive {
  for (let i = 0; i < steps && !done(d); i++) d = stepOnce(spec, d);
  return d;
}

const done = (d: Drive) => TERMINAL_RUN_STATUSES.has(d.snap.run.status) && d.outstanding.length === 0;

function finish(spec: Spec, d: Drive): Drive {
  const end = driveSteps(spec, d, 200);
  expect(done(end)).toBe(true);
  return end;
}

const start = (g: Graph): Drive => ({ snap: snapshotOf(g), outstanding: [], now: 1000 });
const statuses = (s: RunSnapshot) => Object.fromEntries(s.nodes.map((r) => [r.nodeKey, r.status]));
const live = (s: RunSnapshot) => s.nodes.filter((r) => r.status === 'Queued' || r.status === 'Running' || r.status === 'WaitingForApproval');

function migration(s: RunSnapshot, to: Graph) {
  return planMigration({ from: s.graph, to, nodes: s.nodes, edgeOverrides: s.run.edgeOverrides, runStatus: s.run.status });
}

/** How many generated cases reached each property's assertions (a property that only meets ended runs proves nothing). */
const checked = { identity: 0, removed: 0, equivalent: 0, throughX: 0 };

describe('planMigration properties', () => {
  afterAll(() => {
    expect(checked.identity).toBeGreaterThan(20);
    expect(checked.removed).toBeGreaterThan(20);
    expect(checked.equivalent).toBeGreaterThan(20);
    expect(checked.throughX).toBeGreaterThan(5);
  });

  it('migrates a live run to its own version as compatible, changing nothing observable', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 0, max: 12 }), (spec, k) => {
        const g = buildGraph(spec);
        const d = driveSteps(spec, start(g), k);
        if (TERMINAL_RUN_STATUSES.has(d.snap.run.status)) return;
        const same = structuredClone(g);
        const p = migration(d.snap, same);
        expect(p.verdict).toBe('compatible');
        expect(p.mapping.every((m) => m.from === m.to && m.action !== 'requeue' && m.action !== 'drop' && m.action !== 'add')).toBe(true);
        const moved = migrateSnapshot(d.snap, same, p);
        checked.identity += 1;
        expect(moved.nodes).toEqual(d.snap.nodes);
        expect(moved.run).toEqual(d.snap.run);
        // and the run goes on exactly as it would have
        expect(statuses(finish(spec, { ...d, snap: moved }).snap)).toEqual(statuses(finish(spec, d).snap));
      }),
      { numRuns: 200 },
    );
  });

  it('never answers compatible without a mapping when a live node is removed', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 12 }), fc.nat(), (spec, k, pick) => {
        const g = buildGraph(spec);
        const d = driveSteps(spec, start(g), k);
        const rows = live(d.snap);
        if (rows.length === 0) return;
        const gone = rows[pick % rows.length]!.nodeKey;
        const to: Graph = { ...g, nodes: g.nodes.filter((n) => n.key !== gone), edges: g.edges.filter((e) => e.from !== gone && e.to !== gone) };
        const p = migration(d.snap, to);
        expect(p.verdict).not.toBe('compatible');
        expect(p.reasons.some((r) => r.nodeKey === gone && r.code === 'NodeMissing')).toBe(true);
        checked.removed += 1;
      }),
      { numRuns: 200 },
    );
  });

  it('finishes a migrated run as a run started on the new version, when the new version only adds nodes downstream of live ones', () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 1, max: 10 }), fc.array(fc.nat(), { minLength: 1, maxLength: 2 }), (spec, k, picks) => {
        const g = buildGraph(spec);
        const d = driveSteps(spec, start(g), k);
        if (TERMINAL_RUN_STATUSES.has(d.snap.run.status)) return;
        // the added node's predecessors: nodes not settled yet (live or Pending), never the End
        const open = d.snap.nodes.filter((r) => r.kind !== 'End' && r.kind !== 'Start' && (r.status === 'Pending' || live(d.snap).includes(r)));
        if (open.length === 0) return;
        const preds = [...new Set(picks.map((p) => open[p % open.length]!.nodeKey))];
        const x = node('x', 'Tool', { joinPolicy: preds.length >= 2 ? 'Any' : 'All', maxAttempts: 1, timeoutSeconds: 1000, config: { toolName: 'echo' } });
        const to: Graph = {
          ...g,
          nodes: [...g.nodes, x],
          edges: [...g.edges, ...preds.map((p) => edge(`${p}_x`, p, 'x')), edge('x_end', 'x', 'end')],
        };
        const p = migration(d.snap, to);
        expect(p.reasons).toEqual([]);
        expect(p.verdict).toBe('compatible');
        const migrated = finish(spec, { ...d, snap: migrateSnapshot(d.snap, to, p) });
        const fresh = finish(spec, driveSteps(spec, start(to), k));
        expect(statuses(migrated.snap)).toEqual(statuses(fresh.snap));
        expect(migrated.snap.run.status).toBe(fresh.snap.run.status);
        checked.equivalent += 1;
        if (migrated.snap.nodes.find((r) => r.nodeKey === 'x')?.status === 'Succeeded') checked.throughX += 1;
      }),
      { numRuns: 200 },
    );
  });
});
