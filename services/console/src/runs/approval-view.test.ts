import { describe, expect, it } from 'vitest';
import { approvalOf, membersText, waitsForMe } from './approval-view';

const approval = (viewer?: object) => ({
  decisionKind: 'Approve',
  approval: { status: 'pending', quorums: [{ name: 'ops', min: 1, scope: 'run', approvals: 0, rejections: 0, met: false }], decisions: [], nextAt: null, ...(viewer ? { viewer } : {}) },
});

describe('waitsForMe', () => {
  it("follows a policy gate's own answer for the reader", () => {
    expect(waitsForMe(approval({ principal: 'key:a', canDecide: true, rule: null, message: null, quorums: ['ops'] }), false)).toBe(true);
    expect(waitsForMe(approval({ principal: 'key:a', canDecide: false, rule: 'initiator', message: 'no', quorums: ['ops'] }), true)).toBe(false);
  });

  it('lets the run scope decide a gate without a policy', () => {
    expect(waitsForMe({ decisionKind: 'Approve' }, true)).toBe(true);
    expect(waitsForMe({ decisionKind: 'Answer' }, false)).toBe(false);
  });
});

describe('approvalOf and membersText', () => {
  it('reads the summary and says who counts toward each quorum', () => {
    expect(approvalOf({ decisionKind: 'Approve' })).toBeNull();
    const a = approvalOf(approval())!;
    expect(membersText(a.quorums[0]!)).toBe('keys with scope run');
    expect(membersText({ name: 'f', min: 1, approvals: 0, rejections: 0, met: false, principals: ['key:1', 'key:2'] })).toBe('key:1, key:2');
    expect(membersText({ name: 'g', min: 1, approvals: 0, rejections: 0, met: false, group: 'finance' })).toBe('group finance');
  });
});
