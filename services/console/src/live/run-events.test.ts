import { describe, expect, it } from 'vitest';
import type { LiveEvent, NodeRunSummary, RunDetail } from '@flowline/client';
import { applyRunEvents, RunEventLog } from './run-events';

const AT = '2026-01-01T00:00:00.000Z';
const node = (nodeKey: string, over: Partial<NodeRunSummary> = {}): NodeRunSummary => ({
  nodeKey, kind: 'Tool', status: 'Pending', attempt: 0, failureClass: 'None', reason: null,
  pendingDecisionKind: null, childRunId: null, startedAt: null, finishedAt: null, ...over,
});
const detail = (lastSeq: number, nodeRuns: NodeRunSummary[]): RunDetail => ({
  run: {
    id: 'r1', definitionId: 'd1', definitionVersion: 1, status: 'Running', failureClass: 'None', reason: null, paused: false,
    requestId: null, parentRunId: null, conversationId: null, createdAt: AT, startedAt: AT, finishedAt: null, graphHash: 'h', lastSeq,
  },
  nodeRuns, output: null, graph: { nodes: [] },
});
let seq = 0;
const ev = (kind: string, nodeKey: string | null, detail: unknown = {}, at = AT): LiveEvent => ({ seq: ++seq, kind, nodeKey, at, detail });

describe('applyRunEvents', () => {
  it('moves each node where its events leave it, in seq order, with attempts and times', () => {
    seq = 10;
    const d = detail(10, [node('a'), node('b'), node('c'), node('g', { kind: 'Pause' })]);
    const events = [
      ev('node.queued', 'a', { attempt: 1 }),
      ev('node.started', 'a', { attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      ev('node.completed', 'a', { attempt: 1 }, '2026-01-01T00:00:02.000Z'),
      ev('node.queued', 'b', { attempt: 1 }),
      ev('node.failed', 'b', { attempt: 1, retrying: true }),
      ev('node.retried', 'b', { attempt: 1 }),
      ev('node.skipped', 'c'),
      ev('node.started', 'g', { attempt: 1 }),
      ev('gate.requested', 'g', { decisionKind: 'Approve' }),
    ];
    // delivered out of order: applied by seq
    const out = applyRunEvents(d, [...events].reverse());
    const by = new Map(out.nodeRuns.map((n) => [n.nodeKey, n]));
    expect(by.get('a')).toMatchObject({ status: 'Succeeded', attempt: 1, startedAt: '2026-01-01T00:00:01.000Z', finishedAt: '2026-01-01T00:00:02.000Z' });
    expect(by.get('b')).toMatchObject({ status: 'Pending', attempt: 1, finishedAt: null });
    expect(by.get('c')).toMatchObject({ status: 'Skipped' });
    expect(by.get('g')).toMatchObject({ status: 'WaitingForApproval' });
    expect(out.run.lastSeq).toBe(19);
    expect(d.nodeRuns[0]!.status).toBe('Pending');
  });

  it('skips events the detail already reflects, and answers the same object when none is newer', () => {
    seq = 0;
    const old = [ev('node.queued', 'a', { attempt: 1 }), ev('node.completed', 'a', { attempt: 1 })];
    const d = detail(2, [node('a', { status: 'Succeeded', attempt: 1 })]);
    expect(applyRunEvents(d, old)).toBe(d);
    const retried = ev('node.retried', 'a', { attempt: 1 });
    const moved = applyRunEvents(d, [...old, retried]);
    expect(moved.nodeRuns[0]!.status).toBe('Pending');
    // applying the same batch again changes nothing
    expect(applyRunEvents(moved, [...old, retried])).toBe(moved);
  });

  it("takes the run's terminal status and pause from run events, and ignores events of unknown nodes and kinds", () => {
    seq = 5;
    const d = detail(5, [node('a', { status: 'Running', attempt: 1 })]);
    const out = applyRunEvents(d, [ev('run.paused', null), ev('node.steered', 'a', { applied: true }), ev('node.completed', 'zz'), ev('run.completed', null, {}, '2026-01-01T00:00:09.000Z')]);
    expect(out.run).toMatchObject({ status: 'Completed', paused: true, finishedAt: '2026-01-01T00:00:09.000Z', lastSeq: 9 });
    expect(out.nodeRuns[0]!.status).toBe('Running');
    expect(applyRunEvents(out, [ev('run.resumed', null)]).run.paused).toBe(false);
  });
});

describe('RunEventLog', () => {
  it('replays over each read only the events after its lastSeq, so a read never takes back what the events showed', () => {
    seq = 0;
    const log = new RunEventLog();
    const e1 = ev('node.queued', 'a', { attempt: 1 });
    const e2 = ev('node.started', 'a', { attempt: 1 });
    const e3 = ev('node.completed', 'a', { attempt: 1 });
    log.append('r1', [e1, e2, e3]);
    // a read that started before e2 was committed lands after e3 was shown
    const read = detail(1, [node('a', { status: 'Queued', attempt: 1 })]);
    const shown = log.replayOver('r1', read);
    expect(shown.nodeRuns[0]!.status).toBe('Succeeded');
    expect(shown.run.lastSeq).toBe(3);
    // the log dropped what that read covered; a newer read covering everything stays as read
    const later = detail(3, [node('a', { status: 'Succeeded', attempt: 1 })]);
    expect(log.replayOver('r1', later)).toBe(later);
    // other runs and forgotten runs pass through
    expect(log.replayOver('r2', read)).toBe(read);
    log.append('r1', [ev('node.retried', 'a')]);
    log.forget('r1');
    expect(log.replayOver('r1', later)).toBe(later);
  });

  it('keeps at most MAX events per run, the newest', () => {
    const log = new RunEventLog();
    seq = 0;
    const many = Array.from({ length: RunEventLog.MAX + 10 }, () => ev('node.queued', 'a', { attempt: 1 }));
    log.append('r1', many);
    const out = log.replayOver('r1', detail(0, [node('a')]));
    expect(out.run.lastSeq).toBe(RunEventLog.MAX + 10);
  });
});
