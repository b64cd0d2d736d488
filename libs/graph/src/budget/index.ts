export * from './budget';
export * from './usage';
