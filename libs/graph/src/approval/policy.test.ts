import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvalPolicyOf, type ApprovalPolicy, type ApprovalQuorum } from './approval-config';
import { approvalState, assignVoters, deciderStanding, judgeDecision, qualifies, type ApprovalVote, type Decider, type DecisionInput } from './policy';
import { approvalSummary } from './summary';

const policyOf = (approval: unknown): ApprovalPolicy => {
  const r = approvalPolicyOf({ approval } as never);
  if (!r.ok || !r.policy) throw new Error(r.ok ? 'no policy' : r.errors.join('; '));
  return r.policy;
};

const FIN_LEGAL = policyOf({
  quorums: [
    { name: 'finance', principals: ['ann', 'bob', 'cat'], min: 2 },
    { name: 'legal', principals: ['cat', 'dan'], min: 1 },
  ],
  approveRule: 'allQuorums',
  rejectRule: 'any',
  forbid: ['initiator', 'definitionAuthor'],
  timeout: 'PT1H',
  onTimeout: 'reject',
});

const who = (id: string, scopes: string[] = []): Decider => ({ id, scopes, groups: [] });
const vote = (principal: string, decision: 'Approve' | 'Reject' = 'Approve', at = 1): ApprovalVote => ({
  principal, scopes: [], groups: [], decision, path: 'rest', comment: null, at,
});
const input = (over: Partial<DecisionInput>): DecisionInput => ({
  policy: FIN_LEGAL, votes: [], decider: who('ann'), decision: 'Approve', path: 'rest', comment: null,
  initiator: 'ivy', definitionAuthor: 'abe', openedAt: 0, now: 1000, ...over,
});

describe('approvalPolicyOf', () => {
  it('reads a policy with its defaults and durations', () => {
    const p = policyOf({ quorums: [{ name: 'ops', scope: 'operate', min: 1 }] });
    expect(p).toMatchObject({ approveRule: 'allQuorums', rejectRule: 'any', forbid: [], timeoutMs: null, onTimeout: 'reject', escalate: [], notify: [] });
    expect(FIN_LEGAL.timeoutMs).toBe(3_600_000);
  });

  it.each([
    [{}, /quorums must be a non-empty list/],
    [{ quorums: [{ name: 'a', min: 1 }] }, /exactly one of principals, scope or group/],
    [{ quorums: [{ name: 'a', principals: ['x'], min: 2 }] }, /exceeds the 1 principals/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], approveRule: 'most' }, /approveRule must be one of/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], forbid: ['boss'] }, /forbid must list/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], onTimeout: 'approve' }, /onTimeout needs a timeout/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], timeout: 'PT1H', onTimeout: 'escalate' }, /needs escalate steps/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], escalate: [{ after: 'PT1H', addQuorum: { name: 'a', scope: 'x', min: 1 } }] }, /'a' is used twice/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], notify: [{ webhook: 'ftp://x' }] }, /notify\.0 must be/],
    [{ quorums: [{ name: 'a', scope: 'run', min: 1 }], timeout: 'P1M' }, /years and months/],
  ])('refuses %j', (approval, message) => {
    const r = approvalPolicyOf({ approval } as never);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join('\n')).toMatch(message);
  });
});

describe('judgeDecision', () => {
  it('needs all three of 2-of-finance + 1-of-legal, the person in both counting once', () => {
    let votes: ApprovalVote[] = [];
    for (const id of ['cat', 'ann']) {
      const j = judgeDecision(input({ votes, decider: who(id) }));
      expect(j.accepted).toBe(true);
      if (!j.accepted) return;
      expect(j.state.status).toBe('pending');
      votes = [...votes, j.vote];
    }
    const last = judgeDecision(input({ votes, decider: who('bob') }));
    expect(last).toMatchObject({ accepted: true, state: { status: 'approved', by: 'quorum' } });
    if (last.accepted) expect(last.state.quorums).toEqual([
      { name: 'finance', min: 2, members: { principals: ['ann', 'bob', 'cat'] }, approvals: 2, rejections: 0, met: true },
      { name: 'legal', min: 1, members: { principals: ['cat', 'dan'] }, approvals: 1, rejections: 0, met: true },
    ]);
  });

  it('shows quorum progress while pending', () => {
    const j = judgeDecision(input({ votes: [vote('ann')], decider: who('dan') }));
    expect(j).toMatchObject({ accepted: true, state: { status: 'pending', quorums: [{ name: 'finance', approvals: 1, met: false }, { name: 'legal', approvals: 1, met: true }], nextAt: 3_600_000 } });
  });

  it('refuses the initiator and the definition author by rule name, before quorum membership', () => {
    expect(judgeDecision(input({ decider: who('ivy'), policy: { ...FIN_LEGAL, quorums: [{ name: 'all', principals: ['ivy', 'abe'], min: 1 }] } }))).toMatchObject({ accepted: false, rule: 'initiator' });
    expect(judgeDecision(input({ decider: who('abe'), policy: { ...FIN_LEGAL, quorums: [{ name: 'all', principals: ['ivy', 'abe'], min: 1 }] } }))).toMatchObject({ accepted: false, rule: 'definitionAuthor' });
  });

  it('refuses a second decision by the same principal, and a principal in no quorum', () => {
    expect(judgeDecision(input({ votes: [vote('ann')], decider: who('ann'), decision: 'Reject' }))).toMatchObject({ accepted: false, rule: 'alreadyDecided' });
    expect(judgeDecision(input({ decider: who('zed') }))).toMatchObject({ accepted: false, rule: 'notInQuorum' });
  });

  it('lets one reject veto under rejectRule any, whatever the approvals', () => {
    expect(judgeDecision(input({ votes: [vote('ann'), vote('cat')], decider: who('dan'), decision: 'Reject' }))).toMatchObject({ accepted: true, state: { status: 'rejected', by: 'veto' } });
  });

  it('needs the quorums met by rejections under rejectRule quorum', () => {
    const policy = { ...FIN_LEGAL, rejectRule: 'quorum' as const };
    expect(judgeDecision(input({ policy, decider: who('dan'), decision: 'Reject' }))).toMatchObject({ accepted: true, state: { status: 'pending' } });
    const all = [vote('dan', 'Reject'), vote('ann', 'Reject')];
    expect(judgeDecision(input({ policy, votes: all, decider: who('bob'), decision: 'Reject' }))).toMatchObject({ accepted: true, state: { status: 'rejected', by: 'quorum' } });
  });

  it('refuses every decision once the timeout settled the gate', () => {
    expect(judgeDecision(input({ now: 3_600_000 }))).toMatchObject({ accepted: false, rule: 'settled' });
    expect(approvalState(FIN_LEGAL, [], 0, 3_600_000)).toMatchObject({ status: 'rejected', by: 'timeout' });
    expect(approvalState({ ...FIN_LEGAL, onTimeout: 'approve' }, [], 0, 3_600_000)).toMatchObject({ status: 'approved', by: 'timeout' });
  });

  it('adds an escalation quorum after its delay, and all of them at an escalating timeout', () => {
    const policy = policyOf({
      quorums: [{ name: 'team', principals: ['ann', 'bob'], min: 2 }], approveRule: 'anyQuorum', timeout: 'PT2H', onTimeout: 'escalate',
      escalate: [{ after: 'PT1H', addQuorum: { name: 'lead', principals: ['lea'], min: 1 } }, { after: 'PT3H', addQuorum: { name: 'vp', scope: 'admin', min: 1 } }],
    });
    expect(judgeDecision(input({ policy, decider: who('lea'), now: 3_599_999 }))).toMatchObject({ accepted: false, rule: 'notInQuorum' });
    expect(judgeDecision(input({ policy, decider: who('lea'), now: 3_600_000 }))).toMatchObject({ accepted: true, state: { status: 'approved' } });
    expect(approvalState(policy, [], 0, 10)).toMatchObject({ status: 'pending', nextAt: 3_600_000 });
    const late = approvalState(policy, [], 0, 7_200_000);
    expect(late).toMatchObject({ status: 'pending', nextAt: 10_800_000 });
    expect(late.quorums.map((q) => [q.name, q.addedAt])).toEqual([['team', undefined], ['lead', 3_600_000], ['vp', 7_200_000]]);
    expect(judgeDecision(input({ policy, decider: who('boss', ['admin']), now: 7_200_000 }))).toMatchObject({ accepted: true, state: { status: 'approved' } });
  });

  it('settles an anyQuorum approval once one quorum alone is met', () => {
    const policy = { ...FIN_LEGAL, approveRule: 'anyQuorum' as const };
    expect(judgeDecision(input({ policy, decider: who('dan') }))).toMatchObject({ accepted: true, state: { status: 'approved' } });
  });

  it('counts scope and group quorums by what the principal held', () => {
    const q: ApprovalQuorum = { name: 'ops', scope: 'operate', min: 1 };
    expect(qualifies(q, who('x', ['operate']))).toBe(true);
    expect(qualifies(q, who('x', ['read']))).toBe(false);
    expect(qualifies({ name: 'g', group: 'finance', min: 1 }, { id: 'x', scopes: [], groups: ['finance'] })).toBe(true);
  });
});

/** Principals p0..p5 and three quorums over them of random membership and min. */
const POOL = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
const quorumArb = (i: number) =>
  fc.subarray(POOL, { minLength: 1 }).chain((principals) => fc.integer({ min: 1, max: principals.length }).map((min): ApprovalQuorum => ({ name: `q${i}`, principals, min })));
const policyArb = fc
  .tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }).chain((xs) => fc.tuple(...xs.map((_, i) => quorumArb(i)))), fc.constantFrom('allQuorums' as const, 'anyQuorum' as const), fc.constantFrom('any' as const, 'quorum' as const))
  .map(([quorums, approveRule, rejectRule]): ApprovalPolicy => ({ quorums, approveRule, rejectRule, forbid: [], timeoutMs: null, timeout: null, onTimeout: 'reject', escalate: [], notify: [] }));
const votesArb = fc.uniqueArray(fc.record({ principal: fc.constantFrom(...POOL), decision: fc.constantFrom('Approve' as const, 'Reject' as const) }), { selector: (v) => v.principal }).map((vs) => vs.map((v, i) => vote(v.principal, v.decision, i)));

/** Whether some assignment of distinct approvers to quorum places fills every quorum (brute force). */
function bruteForceAll(quorums: ApprovalQuorum[], approvers: string[]): boolean {
  const need = quorums.map((q) => q.min);
  const go = (i: number): boolean => {
    if (need.every((n) => n <= 0)) return true;
    if (i === approvers.length) return false;
    if (go(i + 1)) return true;
    for (const [qi, q] of quorums.entries()) {
      if (need[qi]! > 0 && qualifies(q, who(approvers[i]!))) {
        need[qi]! -= 1;
        const ok = go(i + 1);
        need[qi]! += 1;
        if (ok) return true;
      }
    }
    return false;
  };
  return go(0);
}

describe('deciderStanding ("waiting for me")', () => {
  const standing = (over: Partial<DecisionInput>) => deciderStanding(input(over));

  it('says a member of a quorum who has not decided may decide, naming the quorums they count toward', () => {
    expect(standing({ decider: who('cat') })).toEqual({ canDecide: true, rule: null, message: null, quorums: ['finance', 'legal'] });
    expect(standing({ decider: who('dan'), votes: [vote('ann')] })).toEqual({ canDecide: true, rule: null, message: null, quorums: ['legal'] });
  });

  it('counts a scope quorum by the scopes the reader holds now', () => {
    const policy = policyOf({ quorums: [{ name: 'ops', scope: 'run', min: 2 }] });
    expect(standing({ policy, decider: who('k1', ['read', 'run']) })).toMatchObject({ canDecide: true, quorums: ['ops'] });
    expect(standing({ policy, decider: who('k2', ['read']) })).toMatchObject({ canDecide: false, rule: 'notInQuorum', quorums: [] });
  });

  it('refuses with the rule judgeDecision would: already decided, forbidden (even when in a quorum), in no quorum, settled', () => {
    expect(standing({ decider: who('ann'), votes: [vote('ann')] })).toMatchObject({ canDecide: false, rule: 'alreadyDecided', quorums: ['finance'] });
    const both = { ...FIN_LEGAL, quorums: [{ name: 'all', principals: ['ivy', 'abe'], min: 1 }] };
    expect(standing({ policy: both, decider: who('ivy') })).toMatchObject({ canDecide: false, rule: 'initiator', quorums: ['all'] });
    expect(standing({ policy: both, decider: who('abe') })).toMatchObject({ canDecide: false, rule: 'definitionAuthor', quorums: ['all'] });
    expect(standing({ decider: who('zed') })).toMatchObject({ canDecide: false, rule: 'notInQuorum' });
    expect(standing({ now: 3_600_000 })).toMatchObject({ canDecide: false, rule: 'settled' });
  });

  it('lets an unknown initiator or author refuse nobody', () => {
    const both = { ...FIN_LEGAL, quorums: [{ name: 'all', principals: ['ivy'], min: 1 }] };
    expect(standing({ policy: both, decider: who('ivy'), initiator: null })).toMatchObject({ canDecide: true });
  });

  it('counts an escalation quorum only once it joined', () => {
    const policy = policyOf({ quorums: [{ name: 'team', principals: ['ann'], min: 1 }], escalate: [{ after: 'PT1H', addQuorum: { name: 'lead', principals: ['lea'], min: 1 } }] });
    expect(standing({ policy, decider: who('lea'), now: 3_599_999 })).toMatchObject({ canDecide: false, rule: 'notInQuorum' });
    expect(standing({ policy, decider: who('lea'), now: 3_600_000 })).toMatchObject({ canDecide: true, quorums: ['lead'] });
  });

  it('agrees with judgeDecision on every principal of the pool, whatever the decisions so far', () => {
    fc.assert(fc.property(fc.subarray(['ann', 'bob', 'cat', 'dan']), fc.constantFrom('ann', 'bob', 'cat', 'dan', 'ivy', 'abe', 'zed'), (decided, id) => {
      const votes = decided.map((p) => vote(p));
      const s = standing({ votes, decider: who(id) });
      const j = judgeDecision(input({ votes, decider: who(id) }));
      expect(s.canDecide).toBe(j.accepted);
      if (!j.accepted) expect(s.rule).toBe(j.rule);
    }));
  });
});

describe('approvalSummary', () => {
  it("lists each quorum's members with its progress, the decisions with principal, path and time, and the reader's standing", () => {
    const votes = [{ ...vote('ann', 'Approve', 5_000), path: 'console' as const }];
    const state = approvalState(FIN_LEGAL, votes, 0, 10_000);
    const summary = approvalSummary(state, votes, { principal: 'ann', standing: deciderStanding(input({ votes, decider: who('ann'), now: 10_000 })) });
    expect(summary).toEqual({
      status: 'pending',
      quorums: [
        { name: 'finance', min: 2, principals: ['ann', 'bob', 'cat'], approvals: 1, rejections: 0, met: false },
        { name: 'legal', min: 1, principals: ['cat', 'dan'], approvals: 0, rejections: 0, met: false },
      ],
      decisions: [{ principal: 'ann', decision: 'Approve', path: 'console', comment: null, at: '1970-01-01T00:00:05.000Z' }],
      nextAt: '1970-01-01T01:00:00.000Z',
      viewer: { principal: 'ann', canDecide: false, rule: 'alreadyDecided', message: "principal 'ann' has already decided this approval", quorums: ['finance'] },
    });
    expect(approvalSummary(state, votes)).not.toHaveProperty('viewer');
  });
});

describe('approval policy properties', () => {
  it('approves under allQuorums exactly when distinct approvers can fill every quorum, each counted once', () => {
    fc.assert(fc.property(policyArb, votesArb, (p, votes) => {
      const policy = { ...p, approveRule: 'allQuorums' as const, rejectRule: 'quorum' as const, quorums: p.quorums };
      const approvers = votes.filter((v) => v.decision === 'Approve').map((v) => v.principal);
      const filled = assignVoters(policy.quorums, approvers.map((a) => who(a)));
      expect(filled.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(new Set(approvers).size);
      const s = approvalState(policy, votes.filter((v) => v.decision === 'Approve'), 0, 1);
      expect(s.status === 'approved').toBe(bruteForceAll(policy.quorums, approvers));
      if (s.status === 'approved') expect(new Set(approvers).size).toBeGreaterThanOrEqual(policy.quorums.reduce((a, q) => a + q.min, 0));
    }));
  });

  it('reaches the same state whatever the order of the decisions', () => {
    fc.assert(fc.property(policyArb, votesArb, fc.nat(), (policy, votes, seed) => {
      const shuffled = [...votes].sort((a, b) => ((a.at * 7919 + seed) % 13) - ((b.at * 7919 + seed) % 13));
      const a = approvalState(policy, votes, 0, 1);
      const b = approvalState(policy, shuffled, 0, 1);
      expect(b.status).toBe(a.status);
      expect(b.quorums.map((q) => q.met)).toEqual(a.quorums.map((q) => q.met));
    }));
  });

  it('never un-approves: one more approval keeps an approved gate approved; a reject vetoes under rejectRule any', () => {
    fc.assert(fc.property(policyArb, votesArb, fc.constantFrom(...POOL), (policy, votes, extra) => {
      if (votes.some((v) => v.principal === extra)) return;
      const approvals = votes.filter((v) => v.decision === 'Approve');
      const before = approvalState(policy, approvals, 0, 1);
      const after = approvalState(policy, [...approvals, vote(extra)], 0, 1);
      if (before.status === 'approved') expect(after.status).toBe('approved');
      if (policy.rejectRule === 'any' && votes.some((v) => v.decision === 'Reject')) expect(approvalState(policy, votes, 0, 1).status).toBe('rejected');
    }));
  });

  it('accepts at most one decision per principal and records only principals of a quorum', () => {
    fc.assert(fc.property(policyArb, fc.array(fc.record({ id: fc.constantFrom(...POOL, 'outsider'), decision: fc.constantFrom('Approve' as const, 'Reject' as const) }), { maxLength: 12 }), (policy, attempts) => {
      let votes: ApprovalVote[] = [];
      for (const a of attempts) {
        const j = judgeDecision({ policy, votes, decider: who(a.id), decision: a.decision, path: 'rest', comment: null, initiator: null, definitionAuthor: null, openedAt: 0, now: 1 });
        if (j.accepted) {
          expect(votes.some((v) => v.principal === a.id)).toBe(false);
          expect(policy.quorums.some((q) => qualifies(q, who(a.id)))).toBe(true);
          votes = [...votes, j.vote];
          if (j.state.status !== 'pending') break;
        } else expect(['alreadyDecided', 'notInQuorum']).toContain(j.rule);
      }
    }));
  });
});
