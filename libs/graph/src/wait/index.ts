export { isoOf } from './civil-time';
export { looksLikeTimestamp, parseIsoDuration, parseTimestamp, timerWakeAt } from './wait-time';
export { waitConfigErrors, waitSignalChannels } from './wait-config';
export { waitPlanOf, filterHolds, filterScope, MAX_WAIT_ARMS } from './wait-arms';
export type { WaitArm, WaitArmKind, WaitMode, WaitPlan } from './wait-arms';
