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

describe('coalesce with a minimum gap', () => {
  it('runs the first kick at once and a burst after it once, no sooner than the gap after the run before', async () => {
    const starts: number[] = [];
    const c = coalesce(async () => void starts.push(Date.now()), 80);
    c.kick();
    await new Promise((r) => setTimeout(r, 0));
    expect(starts).toHaveLength(1);
    for (let i = 0; i < 20; i++) c.kick();
    await new Promise((r) => setTimeout(r, 20));
    expect(starts).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(79);
    c.stop();
  });

  it('runs nothing more once stopped in the gap', async () => {
    let runs = 0;
    const c = coalesce(async () => void runs++, 50);
    c.kick();
    await new Promise((r) => setTimeout(r, 0));
    c.kick();
    c.stop();
    await new Promise((r) => setTimeout(r, 80));
    expect(runs).toBe(1);
  });
});
