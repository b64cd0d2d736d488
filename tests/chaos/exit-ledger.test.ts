import { describe, expect, it } from 'vitest';
import { ExitLedger } from './exit-ledger';

const at = new Date('2026-01-01T00:00:00.000Z');

describe('the chaos exit ledger', () => {
  it('expects a kill -9 the harness delivered and nothing else', () => {
    const l = new ExitLedger();
    l.killing('dispatcher-1');
    expect(l.exited('dispatcher-1', null, 'SIGKILL', at)).toBe(false);
    expect(l.total()).toBe(0);
  });

  it('counts a crash (an exit by code) as a violation, with a log line naming the process', () => {
    const l = new ExitLedger();
    expect(l.exited('worker-tool-2', 1, null, at)).toBe(true);
    expect(l.total()).toBe(1);
    expect([...l.unexpected]).toEqual([['worker-tool-2', 1]]);
    expect(l.log).toEqual(['2026-01-01T00:00:00.000Z worker-tool-2 exited (code 1, signal null)']);
  });

  it('counts a SIGKILL the harness did not send, and a kill of one process does not excuse another', () => {
    const l = new ExitLedger();
    l.killing('dispatcher-1');
    expect(l.exited('dispatcher-2', null, 'SIGKILL', at)).toBe(true);
    expect(l.exited('dispatcher-1', null, 'SIGKILL', at)).toBe(false);
    expect(l.total()).toBe(1);
  });

  it('counts a process that died on its own before the pending kill landed, and spends that kill', () => {
    const l = new ExitLedger();
    l.killing('worker-llm-1');
    expect(l.exited('worker-llm-1', 1, null, at)).toBe(true);
    expect(l.log[0]).toMatch(/before the kill -9 the harness sent$/);
    // the restarted process was never targeted: its SIGKILL is unexpected
    expect(l.exited('worker-llm-1', null, 'SIGKILL', at)).toBe(true);
    expect(l.total()).toBe(2);
  });

  it('counts other signals and clean exits, and adds up per process', () => {
    const l = new ExitLedger();
    l.killing('api-1');
    expect(l.exited('api-1', null, 'SIGTERM', at)).toBe(true);
    expect(l.exited('api-1', 0, null, at)).toBe(true);
    expect(l.exited('dispatcher-3', null, 'SIGSEGV', at)).toBe(true);
    expect(Object.fromEntries(l.unexpected)).toEqual({ 'api-1': 2, 'dispatcher-3': 1 });
    expect(l.total()).toBe(3);
  });

  it('judges no exit once the harness is stopping the cluster', () => {
    const l = new ExitLedger();
    l.stopping();
    expect(l.exited('dispatcher-1', 1, null, at)).toBe(false);
    expect(l.total()).toBe(0);
  });
});
