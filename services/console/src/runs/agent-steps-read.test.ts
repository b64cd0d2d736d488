import { describe, expect, it } from 'vitest';
import { toolResultOf, toolResultsByStep, type TranscriptStep } from './agent-steps-read';

const tool = (step: number, payload: Record<string, unknown>): TranscriptStep => ({ step, kind: 'tool', payload });

describe('reading an Agent’s tool results from its transcript', () => {
  it('keys each tool step’s result by its step number and leaves the other kinds out', () => {
    const steps: TranscriptStep[] = [
      { step: 1, kind: 'model', payload: { text: '', toolCalls: [{ id: 'a' }, { id: 'b' }] } },
      tool(2, { callId: 'a', name: 'echo', ok: true, content: 'plain answer' }),
      { step: 3, kind: 'approval', payload: { phase: 'rejected', callId: 'b', content: 'not a tool step' } },
      tool(4, { callId: 'b', name: 'pay', ok: false, error: 'rejected by a person', content: 'error: a person rejected this tool call' }),
      { step: 5, kind: 'steer', payload: { message: 'faster' } },
    ];
    const byStep = toolResultsByStep(steps);
    expect([...byStep.keys()]).toEqual([2, 4]);
    expect(byStep.get(2)).toEqual({ ok: true, error: null, text: 'plain answer', json: null, path: [] });
    expect(byStep.get(4)).toEqual({ ok: false, error: 'rejected by a person', text: 'error: a person rejected this tool call', json: null, path: [] });
  });

  it('opens a JSON result at its first meaningful level, as the output is opened', () => {
    expect(toolResultOf({ ok: true, content: '{"result":{"rows":[1,2],"total":2}}' })).toEqual({
      ok: true,
      error: null,
      text: null,
      json: { rows: [1, 2], total: 2 },
      path: ['result'],
    });
    expect(toolResultOf({ ok: true, content: ' [1, 2] ' })).toMatchObject({ json: [1, 2], path: [], text: null });
  });

  it('shows scalars, broken JSON (a result cut at 16 KiB) and plain text as text', () => {
    expect(toolResultOf({ ok: true, content: '42' })).toMatchObject({ text: '42', json: null });
    expect(toolResultOf({ ok: true, content: '"quoted"' })).toMatchObject({ text: '"quoted"', json: null });
    const cut = '{"rows":[1,2,\n[truncated: 16384 of 90000 bytes]';
    expect(toolResultOf({ ok: true, content: cut })).toMatchObject({ text: cut, json: null });
  });

  it('reads no result from a payload that is not a tool step’s', () => {
    expect(toolResultOf({ ok: true })).toBeNull();
    expect(toolResultOf({ content: 'x' })).toBeNull();
    expect(toolResultsByStep([tool(2, { name: 'echo' })]).size).toBe(0);
  });
});
