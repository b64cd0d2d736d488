/** The stuck-run watchdog's pure decision. */
export { STUCK_INVARIANTS, stuckFindings } from './watchdog';
export type { StuckFinding, StuckInvariant } from './watchdog';
