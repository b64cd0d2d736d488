import { describe, expect, it } from 'vitest';
import { coalesce } from './use-run-live';

describe('coalesce', () => {
  it('runs a burst of kicks as one run in flight plus one after it, never two at once', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let runs = 0;
    const gates: Array<() => void> = [];
    const c = coalesce(async () => {
      runs++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
    });
    for (let i = 0; i < 50; i++) c.kick();
    expect(runs).toBe(1);
    gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    expect(maxInFlight).toBe(1);
    // a failed run does not stop later kicks
    let failed = 0;
    const failing = coalesce(() => Promise.reject(new Error(`down ${++failed}`)));
    failing.kick();
    await new Promise((r) => setTimeout(r, 0));
    failing.kick();
    await new Promise((r) => setTimeout(r, 0));
    expect(failed).toBe(2);
  });

  it('does nothing once stopped', async () => {
    let runs = 0;
    const c = coalesce(async () => void runs++);
    c.stop();
    c.kick();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(0);
  });
});
