// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { render } from '@testing-library/react';
import { NOT_RUN, StatusBadge, shownNodeStatus, toneOf } from './status';

describe('shownNodeStatus', () => {
  it('reads a Pending node of an ended run as never run, and leaves every other status as it is', () => {
    expect(shownNodeStatus('Pending', true)).toBe(NOT_RUN);
    expect(shownNodeStatus('Pending', false)).toBe('Pending');
    for (const s of ['Succeeded', 'Failed', 'Skipped', 'Cancelled', 'Queued', 'Running', 'WaitingForApproval']) expect(shownNodeStatus(s, true)).toBe(s);
  });

  it('draws it as "Not run" in the skipped tone', () => {
    const { container } = render(<StatusBadge status={NOT_RUN} />);
    expect(container.textContent).toBe('Not run');
    expect(toneOf(NOT_RUN)).toBe('skipped');
  });
});
