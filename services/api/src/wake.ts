/**
 * After an intent or a new run commits, the API tells dispatchers on the wake channel
 * (libs/queue). The committed `wake_at` is the guarantee; the signal only saves a sweep
 * interval, so a failed publish is logged, never surfaced.
 */
import { publishWake as publishWakeSignal } from '@flowline/queue';
import type { AppDeps } from './context';

/**
 * Publishes `{ runId, tenantId }` on the wake channel of the run's shard (its owner's alone);
 * never throws. The tenant lets the owner order its ticks fairly across tenants before it has
 * read the run.
 */
export async function publishWake(deps: Pick<AppDeps, 'redis' | 'queuePrefix' | 'logger' | 'limits'>, runId: string, tenantId?: string): Promise<void> {
  try {
    await publishWakeSignal(deps.redis, tenantId === undefined ? { runId } : { runId, tenantId }, deps.queuePrefix, deps.limits.shardCount);
  } catch (err) {
    deps.logger.warn({ runId, err }, 'wake publish failed; the dispatcher sweep will pick the run up');
  }
}
