/**
 * Which process exits of a chaos run the harness caused. The only expected exit is a
 * `kill -9` the harness itself delivered (recorded with {@link ExitLedger.killing} just
 * before it); every other exit — a crash, an exit by code (even one that beat a pending
 * kill), another signal — is unexpected and counts as a violation of the run (0 allowed).
 * Exits after {@link ExitLedger.stopping} (the harness tearing the cluster down) are not judged.
 */
export class ExitLedger {
  private readonly pendingKills = new Set<string>();
  private readonly counts = new Map<string, number>();
  private readonly lines: string[] = [];
  private stopped = false;

  /** the harness is about to SIGKILL the process labelled `label` */
  killing(label: string): void {
    this.pendingKills.add(label);
  }

  /** the harness is tearing the cluster down: later exits are not judged */
  stopping(): void {
    this.stopped = true;
  }

  /**
   * Judges one exit of `label` (exit code, or the signal that ended it).
   * @returns true when it was unexpected (a violation)
   */
  exited(label: string, code: number | null, signal: NodeJS.Signals | null, at: Date = new Date()): boolean {
    if (this.stopped) return false;
    // A pending kill is spent by the next exit whatever it was: a process that died on its
    // own before the kill landed crashed, and its restarted successor was never targeted.
    const killed = this.pendingKills.delete(label);
    if (killed && signal === 'SIGKILL') return false;
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
    this.lines.push(`${at.toISOString()} ${label} exited (code ${code}, signal ${signal})${killed ? ' before the kill -9 the harness sent' : ''}`);
    return true;
  }

  /** unexpected exits by label */
  get unexpected(): ReadonlyMap<string, number> {
    return this.counts;
  }

  /** one line per unexpected exit, oldest first */
  get log(): readonly string[] {
    return this.lines;
  }

  /** how many unexpected exits (the violation count) */
  total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
}
