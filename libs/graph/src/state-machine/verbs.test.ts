import { describe, expect, it } from 'vitest';
import { NODE_KINDS, NODE_STATUSES, RUN_STATUSES, TERMINAL_RUN_STATUSES, type NodeKind, type NodeStatus, type RunStatus } from '../model';
import { OPERATOR_VERBS, VERB_RULES, verbApplies, verbRefusal, verbTakesKind, type VerbState } from './verbs';

const state = (runStatus: RunStatus, status: NodeStatus, kind: NodeKind = 'Tool', extra: Partial<NonNullable<VerbState['node']>> = {}): VerbState => ({
  runStatus,
  node: { status, kind, held: false, cancelSurvivor: false, ...extra },
});

describe('the operator verb table', () => {
  it('names every verb once, each with a scope and a run-status list of known statuses', () => {
    expect(Object.keys(VERB_RULES).sort()).toEqual([...OPERATOR_VERBS].sort());
    for (const verb of OPERATOR_VERBS) {
      for (const s of VERB_RULES[verb].runStatuses) expect(RUN_STATUSES).toContain(s);
    }
  });

  it('refuses every verb but resume and breakpoints on a Cancelling or terminal run, survivors of a cancel apart', () => {
    for (const verb of OPERATOR_VERBS) {
      for (const runStatus of RUN_STATUSES) {
        if (!TERMINAL_RUN_STATUSES.has(runStatus) && runStatus !== 'Cancelling') continue;
        for (const kind of NODE_KINDS) {
          for (const status of NODE_STATUSES) {
            const applies = verbApplies(verb, state(runStatus, status, kind));
            const expected =
              verb === 'resume' || verb === 'breakpoints' ||
              (verb === 'decide' && status === 'WaitingForApproval' && (kind === 'Pause' || kind === 'ChatInput' || kind === 'Agent')) ||
              (runStatus === 'Failed' && ['override', 'retry', 'complete', 'input'].includes(verb) && verbApplies(verb, state('Running', status, kind)));
            expect(applies, `${verb} on a ${runStatus} run, ${kind} ${status}`).toBe(expected);
          }
        }
      }
    }
  });

  it('lets a retry or complete reach a survivor of a cancel on a Cancelled run, and nothing else of that run', () => {
    const survivor = state('Cancelled', 'Failed', 'Tool', { cancelSurvivor: true });
    expect(verbApplies('retry', survivor)).toBe(true);
    expect(verbApplies('complete', survivor)).toBe(true);
    expect(verbApplies('skip', survivor)).toBe(false);
    expect(verbApplies('retry', state('Cancelled', 'Failed'))).toBe(false);
    expect(verbRefusal('complete', state('Cancelled', 'Failed', 'Pause', { cancelSurvivor: true }))).toBe('a Pause node is decided, not completed');
  });

  it('retries a Failed node or a held decision only', () => {
    expect(verbApplies('retry', state('Running', 'Succeeded', 'DecisionModel', { held: true }))).toBe(true);
    expect(verbRefusal('retry', state('Running', 'Succeeded'))).toBe('node is Succeeded: only a Failed node or a held decision can be retried');
    expect(verbApplies('retry', state('Failed', 'Failed'))).toBe(true);
  });

  it('words its refusals as the API answers them', () => {
    expect(verbRefusal('skip', state('Running', 'WaitingForApproval', 'Pause'))).toBeNull();
    expect(verbRefusal('skip', state('Running', 'Queued'))).toBe('node is Queued');
    expect(verbRefusal('skip', state('Cancelling', 'Pending'))).toBe('run is Cancelling');
    expect(verbRefusal('complete', state('Running', 'Succeeded'))).toBe('node is Succeeded');
    expect(verbRefusal('input', state('Running', 'Running'))).toBe('node is Running, not Pending');
    expect(verbRefusal('steer', state('Running', 'Running', 'Tool'))).toBe('a Tool node cannot be steered');
    // a steer names the run first, the other node verbs the node first
    expect(verbRefusal('steer', state('Completed', 'Succeeded', 'Agent'))).toBe('run is Completed');
    expect(verbRefusal('steer', state('Running', 'Succeeded', 'Agent'))).toBe('node is Succeeded, not Queued or Running');
    expect(verbRefusal('pause', { runStatus: 'Completed' })).toBe('run is Completed');
    expect(verbRefusal('skip', { runStatus: 'Running' })).toBe('no node');
    expect(verbRefusal('decide', state('Running', 'WaitingForApproval', 'Tool'))).toBe('a Tool node takes no decision');
    expect(verbRefusal('decide', state('Running', 'Pending', 'Pause'))).toBe('node is Pending, not WaitingForApproval');
  });

  it('says which kinds a node verb may act on, and that a run verb acts on none', () => {
    expect(NODE_KINDS.filter((k) => verbTakesKind('decide', k))).toEqual(['Agent', 'Pause', 'ChatInput']);
    expect(NODE_KINDS.filter((k) => verbTakesKind('steer', k)).sort()).toEqual(['Agent', 'LlmCall']);
    expect(NODE_KINDS.filter((k) => !verbTakesKind('complete', k)).sort()).toEqual(['ChatInput', 'Pause']);
    expect(verbTakesKind('pause', 'Tool')).toBe(false);
  });
});
