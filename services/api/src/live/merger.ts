/**
 * Wake-up merging: pings for one run that arrive within `windowMs` of the first are
 * delivered once, as the highest seq seen (a client re-reads from its watermark, so the
 * highest seq covers every lower one). The merged kind is the most significant one seen
 * (run > gate > node), so a status change is never hidden behind a node ping.
 */
import type { ChangeKind, RunChangedPing } from '@flowline/queue';

const KIND_RANK: Readonly<Record<ChangeKind, number>> = { node: 0, gate: 1, run: 2 };

/** Folds `next` into `acc`: highest seq, most significant kind. */
export function mergePing(acc: RunChangedPing, next: RunChangedPing): RunChangedPing {
  return {
    runId: acc.runId,
    seq: Math.max(acc.seq, next.seq),
    kind: KIND_RANK[next.kind] > KIND_RANK[acc.kind] ? next.kind : acc.kind,
  };
}

/** Timer functions (injectable for unit tests). */
export interface MergerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: MergerTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Per-run ping merger; `deliver` receives one merged ping per run per window. */
export interface PingMerger {
  add(ping: RunChangedPing): void;
  /** delivers everything pending now */
  flush(): void;
  /** drops pending pings and timers */
  close(): void;
  /** runs with a ping waiting for its window */
  pendingCount(): number;
}

/** Creates a {@link PingMerger}; `windowMs` 0 delivers every ping at once. */
export function createPingMerger(
  windowMs: number,
  deliver: (ping: RunChangedPing) => void,
  timers: MergerTimers = realTimers,
): PingMerger {
  const pending = new Map<string, { ping: RunChangedPing; timer: unknown }>();
  const fire = (runId: string) => {
    const p = pending.get(runId);
    if (!p) return;
    pending.delete(runId);
    deliver(p.ping);
  };
  return {
    add(ping) {
      if (windowMs <= 0) {
        deliver(ping);
        return;
      }
      const p = pending.get(ping.runId);
      if (p) {
        p.ping = mergePing(p.ping, ping);
        return;
      }
      pending.set(ping.runId, { ping, timer: timers.set(() => fire(ping.runId), windowMs) });
    },
    flush() {
      for (const [runId, p] of [...pending]) {
        timers.clear(p.timer);
        fire(runId);
      }
    },
    close() {
      for (const p of pending.values()) timers.clear(p.timer);
      pending.clear();
    },
    pendingCount: () => pending.size,
  };
}
