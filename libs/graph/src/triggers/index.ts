export { eventNameMatches, judgeEvent, MAX_EVENT_TRIGGERS, parseEventTriggers, triggerPatterns, triggerScope } from './event-triggers';
export type { EventTrigger, TriggerEvent, TriggerVerdict } from './event-triggers';
