/**
 * The transport-free protocol of Flowline's queues and channels: queue names, job ids and
 * key layouts (names.ts), the schemas of what crosses Redis (schemas.ts) and their exact-number
 * wire form (wire.ts), the live channel's vocabulary (live.ts), and the one publisher of
 * wakes, change pings and cancellations (signals.ts). Imports neither BullMQ nor ioredis, so
 * the browser client (`@flowline/queue/protocol`) can use it; the BullMQ lane code is in
 * ../transport.
 */
export * from './names';
export * from './schemas';
export { isExactWakeMessage, isExactWorkItem, isExactWorkReturn, isJson } from './exact-shape';
export * from './wire';
export * from './live';
export * from './signals';
