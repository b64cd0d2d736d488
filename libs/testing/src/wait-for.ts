/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** give up after this long @default 10000 */
  timeoutMs?: number;
  /** pause between attempts @default 25 */
  intervalMs?: number;
  /** named in the timeout error */
  description?: string;
}

/**
 * Polls `fn` until it returns (or resolves to) a value that is neither `undefined`, `null`
 * nor `false`, and returns that value. A throwing `fn` counts as "not yet" (so assertions
 * can be polled); on timeout the last error is rethrown, or a timeout error is thrown.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: WaitForOptions = {},
): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== null && value !== false) {
        return value as Exclude<T, undefined | null | false>;
      }
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      if (lastError !== undefined) throw lastError;
      throw new Error(
        `waitFor timed out after ${timeoutMs} ms${opts.description ? `: ${opts.description}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
