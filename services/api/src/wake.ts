/**
 * After an intent or a new run commits, the API tells dispatchers on the wake channel
 * (libs/queue). The committed `wake_at` is the guarantee; the signal only saves a sweep
 * interval, so a failed publish is logged, never surfaced.
 */
import { publishWake as publishWakeSignal } from '@flowline/queue';
import type { AppDeps } from './context';

/** Publishes `{ runId }` on the wake channel of the run's shard (its owner's alone); never throws. */
export async function publishWake(deps: Pick<AppDeps, 'redis' | 'queuePrefix' | 'logger' | 'limits'>, runId: string): Promise<void> {
  try {
    await publishWakeSignal(deps.redis, { runId }, deps.queuePrefix, deps.limits.shardCount);
  } catch (err) {
    deps.logger.warn({ runId, err }, 'wake publish failed; the dispatcher sweep will pick the run up');
  }
}
