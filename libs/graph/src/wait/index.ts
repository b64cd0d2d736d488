export { isoOf } from './civil-time';
export { looksLikeTimestamp, parseIsoDuration, parseTimestamp, timerWakeAt } from './wait-time';
export { waitConfigErrors } from './wait-config';
