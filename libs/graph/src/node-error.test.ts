import { describe, expect, it } from 'vitest';
import { failureClassOf, FlowlineNodeError } from './node-error';

describe('the node error base class', () => {
  it('carries its failure class, a code (the class when none is given) and whether the engine may retry it', () => {
    const timeout = new FlowlineNodeError('Timeout', 'too slow', { code: 'ToolTimedOut' });
    expect(timeout).toMatchObject({ failureClass: 'Timeout', code: 'ToolTimedOut', message: 'too slow', retryable: true });
    expect(new FlowlineNodeError('ValidationFailed', 'bad')).toMatchObject({ code: 'ValidationFailed', retryable: false });
    expect(new FlowlineNodeError('Cancelled', 'stop').retryable).toBe(false);
  });

  it('reports its own class, and anything else as NodeFailed', () => {
    expect(failureClassOf(new FlowlineNodeError('Interrupted', 'gone'))).toBe('Interrupted');
    expect(failureClassOf(new Error('boom'))).toBe('NodeFailed');
    expect(failureClassOf('not an error')).toBe('NodeFailed');
  });
});
