export { DEFAULT_MAX_START_DELAY_DAYS, delayedStartOf } from './delayed-start';
export type { DelayedStart } from './delayed-start';
export {
  CATCHUP_MODES,
  DEFAULT_SCHEDULE_POLICY,
  MIN_EVERY_MS,
  OVERLAP_POLICIES,
  checkSchedulePolicy,
  checkScheduleSpec,
  compileScheduleSpec,
} from './spec';
export type { CatchupMode, CompiledSpec, OverlapPolicy, SchedulePolicy, ScheduleSpec } from './spec';
export { catchupVerdicts, nextSlot, overlapVerdict, previewSlots, slotJitterMs, slotRequestId, slotsBetween, slotView } from './slots';
export type { CatchupVerdict, OverlapVerdict, SlotView } from './slots';
export { instantOfWall, isTimeZone, offsetAt, wallOf } from './zone';
