import { describe, expect, it } from 'vitest';
import type { Blocker } from '@flowline/client';
import { ApiRequestError } from '@flowline/client';
import { refusalDetailLines, refusalMessagesFor } from '../api/refusal';
import { agentStepsOf } from './AgentSteps';
import { gateProgressOf, quorumText } from './GateProgress';
import { declaredChannels } from './SignalForm';
import { timeLeftText, waitArmsOf } from './WaitPanel';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const blocker = (kind: Blocker['kind'], details: Record<string, unknown>): Blocker => ({ nodeKey: 'w', status: 'Running', kind, since: null, details });

describe('a Wait’s arms and its time left', () => {
  it('reads one arm of a plain Wait and the list of a composite one', () => {
    expect(waitArmsOf(blocker('signal', { channel: 'review' }))).toEqual({ mode: 'one', arms: [{ index: 0, kind: 'signal', channel: 'review' }], until: null });
    expect(waitArmsOf(blocker('timer', { until: '2026-01-01T01:00:00Z' }))).toEqual({
      mode: 'one',
      arms: [{ index: 0, kind: 'timer', until: '2026-01-01T01:00:00Z' }],
      until: '2026-01-01T01:00:00Z',
    });
    const arms = [{ index: 0, kind: 'token', waitpointId: 'wp', callbackUrl: 'http://x/w/wp/s' }, { index: 1, kind: 'timer' }];
    expect(waitArmsOf(blocker('wait', { mode: 'any', arms, until: '2026-01-01T00:30:00Z' }))).toEqual({ mode: 'any', arms, until: '2026-01-01T00:30:00Z' });
    expect(waitArmsOf(blocker('gate', { decisionKind: 'Approve' }))).toBeNull();
  });

  it('says the time left in the largest units that read well', () => {
    expect(timeLeftText('2026-01-01T00:00:09.2Z', NOW)).toBe('in 10 s');
    expect(timeLeftText('2026-01-01T00:04:05Z', NOW)).toBe('in 4 min 5 s');
    expect(timeLeftText('2026-01-01T03:20:00Z', NOW)).toBe('in 3 h 20 min');
    expect(timeLeftText('2026-01-04T05:00:00Z', NOW)).toBe('in 3 d 5 h');
    expect(timeLeftText('2025-12-31T23:59:00Z', NOW)).toBe('due now');
  });

  it('lists the channels a graph declares, none when it declares none', () => {
    expect(declaredChannels({ signals: { review: { schema: null }, cancel: {} }, nodes: [] })).toEqual(['review', 'cancel']);
    expect(declaredChannels({ nodes: [] })).toEqual([]);
    expect(declaredChannels(null)).toEqual([]);
  });
});

describe('an Agent’s steps', () => {
  it('keeps the well-formed steps and tool records, and nothing for an output without steps', () => {
    const out = agentStepsOf({
      text: 'done',
      steps: [{ step: 1, kind: 'model', toolCalls: 1 }, { step: 2, kind: 'tool', name: 'echo', ok: true }, { kind: 'tool' }, 'junk'],
      toolCalls: [{ name: 'echo', arguments: { text: 'hi' }, ok: true }, 7],
    });
    expect(out).toEqual({
      steps: [{ step: 1, kind: 'model', toolCalls: 1 }, { step: 2, kind: 'tool', name: 'echo', ok: true }],
      toolCalls: [{ name: 'echo', arguments: { text: 'hi' }, ok: true }],
    });
    expect(agentStepsOf({ text: 'plain LLM answer' })).toBeNull();
    expect(agentStepsOf(null)).toBeNull();
  });
});

describe('quorum progress, said generically', () => {
  it('reads name, how many and how many are needed when the member names them, else shows the member', () => {
    expect(quorumText({ name: 'finance', approvals: 1, min: 2 })).toBe('finance: 1 of 2');
    expect(quorumText({ name: 'legal', count: 0, required: 1 })).toBe('legal: 0 of 1');
    expect(quorumText({ name: 'ops', decided: ['k1'] })).toBe('ops: {"name":"ops","decided":["k1"]}');
  });
  it('finds the list in the gate data, beside it or under approval / gate, and nothing when there is none', () => {
    const q = [{ name: 'finance', approvals: 1, min: 2 }];
    expect(gateProgressOf({ decisionKind: 'Approve', quorums: q })).toEqual(q);
    expect(gateProgressOf({ approval: { quorums: q } })).toEqual(q);
    expect(gateProgressOf({ gate: { progress: q } })).toEqual(q);
    expect(gateProgressOf({ decisionKind: 'Approve', quorums: [] })).toBeNull();
    expect(gateProgressOf(null)).toBeNull();
  });
});

describe('a refusal’s per-member reasons', () => {
  const err = new ApiRequestError(400, 'ValidationFailed', 'payload.arguments do not match', [
    { key: 'payload.arguments', message: '/entityNames must be array' },
    { key: 'comment', message: 'too long' },
    { key: 'payload.arguments', message: '/entityNames must be array' },
  ]);
  it('gives the messages of one member for its field', () => {
    expect(refusalMessagesFor(err, 'payload.arguments')).toEqual(['/entityNames must be array']);
    expect(refusalMessagesFor(new Error('x'), 'payload.arguments')).toEqual([]);
  });
  it('lists every member’s reason once, as key: message', () => {
    expect(refusalDetailLines(err)).toEqual(['payload.arguments: /entityNames must be array', 'comment: too long']);
    expect(refusalDetailLines(new ApiRequestError(404, 'NotFound', 'run'))).toEqual([]);
  });
});
