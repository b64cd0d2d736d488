import { describe, expect, it } from 'vitest';
import { copyRow, ROW_MEMBERS } from './plan-state';
import { node, pendingRow } from './test-kit';
import type { NodeRunState } from './types';

// A member of NodeRunState missing from ROW_MEMBERS (so from copyRow) names itself here as a type error.
type Uncopied = Exclude<keyof NodeRunState, (typeof ROW_MEMBERS)[number]>;
const complete: [Uncopied] extends [never] ? 'every member copied' : Uncopied = 'every member copied';

/** A row with every member set to a value of its own. */
function fullRow(): NodeRunState {
  return {
    ...pendingRow(node('m', 'Map')),
    status: 'Running',
    attempt: 2,
    invocationId: 'inv-1',
    reason: 'r',
    input: { run: { input: { q: 1 } }, upstream: {}, input: null },
    inputOverride: { input: { edited: true } },
    output: { status: 'succeeded', attempt: 1, branch: null, output: { n: 1 } },
    notBefore: 1,
    deadlineAt: 2,
    queuedAt: 3,
    startedAt: 4,
    finishedAt: 5,
    steering: [{ operationId: 'op', message: 'm', at: 6 }] as unknown as NodeRunState['steering'],
    pendingDecisionKind: 'Approval' as NodeRunState['pendingDecisionKind'],
    decision: { decision: 'Approve' } as NodeRunState['decision'],
    held: true,
    childRunId: 'child-1',
    loop: { iteration: 1 } as unknown as NodeRunState['loop'],
    map: { live: [] } as unknown as NodeRunState['map'],
    approvals: [] as NodeRunState['approvals'],
  };
}

describe('copyRow', () => {
  it('copies every member of a row into a new object', () => {
    expect(complete).toBe('every member copied');
    const row = fullRow();
    const copy = copyRow(row);
    expect(copy).not.toBe(row);
    expect(copy).toStrictEqual(row);
    expect(Object.keys(copy).sort()).toEqual([...ROW_MEMBERS].sort());
  });

  it('leaves out the optional members a row does not have, as a spread would', () => {
    const row = pendingRow(node('t', 'Tool'));
    expect('map' in row || 'approvals' in row).toBe(false);
    expect(copyRow(row)).toStrictEqual({ ...row });
  });
});
