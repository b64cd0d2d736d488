/** Time as an injectable dependency (epoch ms); tests pass a fixed or stepping clock. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
