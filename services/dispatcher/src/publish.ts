/**
 * The chat publish pass (CONTRACT §2 `publishToChat`, event `node.published`), run after a
 * tick's commit beside the other side effects: the pure `publicationsOf` picks the nodes
 * each committed plan made Succeeded that publish; `publishNodeOutputs` writes each as an
 * assistant message of the run's conversation plus `node.published`, guarded so an
 * attempt is published once (and never on a Cancelling/Cancelled run). The write bumps the
 * run's version and seq, so this replica's cached snapshot of the run is dropped and the
 * change is pinged like any committed event.
 *
 * A publish failure never fails the node: it is logged and the item is tried again with
 * the next commit this replica makes, at most `maxTries` times in all. `heal` (on shard
 * gain and with the in-flight check) publishes what a crash between commit and publish,
 * or a given-up item, left behind: the node rows say what is still unpublished.
 */
import type { RedisConnection } from '@flowline/queue';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { publicationOfRow, publicationsOf, type NodeKind, type OutputEnvelope } from '@flowline/graph';
import { findUnpublished, publishNodeOutputs, type PublishItem } from '@flowline/db';
import { publishChangePings, type RunChangedPing } from '@flowline/queue';
import type { CommittedPlan } from './tick';

export interface PublisherDeps {
  pool: Pool;
  redis: RedisConnection;
  prefix: string;
  /** forgets this replica's cached snapshot of a run the publish changed */
  dropCached(runId: string): void;
  log: Logger;
  /** tries per item before it is given up (logged); @default 3 */
  maxTries?: number;
}

const keyOf = (i: Pick<PublishItem, 'runId' | 'nodeKey' | 'attempt'>) => `${i.runId}\u0000${i.nodeKey}\u0000${i.attempt}`;

/** Builds the publish pass; `afterCommit` is safe to call with any committed batch. */
export function createPublisher(d: PublisherDeps) {
  const maxTries = d.maxTries ?? 3;
  /** failed items awaiting another try, with the tries spent */
  const retry = new Map<string, { item: PublishItem; tries: number }>();

  async function afterCommit(committed: CommittedPlan[]): Promise<void> {
    const items: PublishItem[] = [...retry.values()].map((r) => r.item);
    for (const { snapshot, plan } of committed) {
      for (const p of publicationsOf(snapshot.graph, snapshot.run.status, plan)) items.push({ runId: snapshot.run.id, ...p });
    }
    await publish(items);
  }

  /** Publishes what the node rows of `shards` still owe (at most `limit` per call); returns how many. */
  async function heal(shards: number[], limit = 200): Promise<number> {
    try {
      const rows = await findUnpublished(d.pool, shards, limit);
      const items: PublishItem[] = [];
      for (const r of rows) {
        const p = publicationOfRow(r.kind as NodeKind, r.nodeKey, r.attempt, r.output as OutputEnvelope | null);
        if (p) items.push({ runId: r.runId, ...p });
      }
      if (items.length > 0) d.log.info({ count: items.length }, 'publishing chat answers a publish pass left behind');
      return await publish(items);
    } catch (err) {
      d.log.warn({ err }, 'chat publish heal failed; the next in-flight check tries again');
      return 0;
    }
  }

  async function publish(items: PublishItem[]): Promise<number> {
    if (items.length === 0) return 0;
    const res = await publishNodeOutputs(d.pool, items);
    for (const done of [...res.skipped, ...res.published]) retry.delete(keyOf(done));
    for (const { item, error } of res.failed) {
      const tries = (retry.get(keyOf(item))?.tries ?? 0) + 1;
      const log = d.log.child({ runId: item.runId, nodeKey: item.nodeKey });
      if (tries >= maxTries) {
        retry.delete(keyOf(item));
        log.error({ err: error, tries }, 'chat publish failed again; left to the heal scan');
      } else {
        retry.set(keyOf(item), { item, tries });
        log.warn({ err: error, tries }, 'chat publish failed; tried again with the next commit');
      }
    }
    if (res.published.length === 0) return 0;
    const pings: RunChangedPing[] = [];
    for (const pub of res.published) {
      d.dropCached(pub.runId);
      d.log.info({ runId: pub.runId, nodeKey: pub.nodeKey, messageId: pub.messageId }, 'node published to chat');
      pings.push({ runId: pub.runId, seq: pub.seq, kind: 'node' });
    }
    await publishChangePings(d.redis, pings, d.prefix);
    return res.published.length;
  }

  return { afterCommit, heal, pendingRetries: () => retry.size };
}
