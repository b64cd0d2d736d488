export * from './protocol';
export * from './transport/connect-redis';
export * from './transport/lane-queue';
export * from './transport/lane-worker';
export * from './transport/job-facts';
export * from './transport/dispatch-window';
export * from './transport/lane-backlog';
export * from './transport/lane-telemetry';
