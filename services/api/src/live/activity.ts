/**
 * `streamNodeActivity`: relays one LLM invocation's activity stream
 * (`<prefix>:activity:<invocationId>`, XADD fields `type`/`text`) to a socket as
 * `nodeActivity` frames — the backlog from offset 0 first, then new entries as they land
 * (XREAD BLOCK on a dedicated connection), until a `terminal` entry, the socket leaving,
 * or the node row no longer running that invocation (checked after each empty block).
 */
import type { Logger } from 'pino';
import { activityEntrySchema, activityStreamKey, duplicateConnection, type NodeActivity, type RedisConnection } from '@flowline/queue';

/** What a reader needs. */
export interface ActivityReaderDeps {
  redis: RedisConnection;
  prefix: string;
  blockMs: number;
  logger: Logger;
  /** true while the node row still runs this invocation */
  stillRunning(): Promise<boolean>;
  emit(frame: NodeActivity): void;
}

/** A running reader. */
export interface ActivityReader {
  /** settles when the reader stopped */
  readonly done: Promise<void>;
  stop(): void;
}

type XReadReply = Array<[string, Array<[string, string[]]>]> | null;

/** Starts relaying `invocationId`'s stream of `runId`/`nodeKey`. */
export function startActivityReader(
  d: ActivityReaderDeps,
  target: { runId: string; nodeKey: string; invocationId: string },
): ActivityReader {
  const conn = duplicateConnection(d.redis, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
  conn.on('error', (err) => d.logger.debug({ err, invocationId: target.invocationId }, 'activity reader redis error'));
  const key = activityStreamKey(target.invocationId, d.prefix);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    conn.disconnect();
  };

  const loop = async () => {
    let lastId = '0';
    let offset = 0;
    while (!stopped) {
      const reply = (await conn.xread('COUNT', 500, 'BLOCK', d.blockMs, 'STREAMS', key, lastId)) as XReadReply;
      if (stopped) return;
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length === 0) {
        if (!(await d.stillRunning())) return;
        continue;
      }
      for (const [id, fields] of entries) {
        lastId = id;
        const raw: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) raw[fields[i]!] = fields[i + 1]!;
        const parsed = activityEntrySchema.safeParse(raw);
        const at = offset++;
        if (!parsed.success) {
          d.logger.warn({ invocationId: target.invocationId, entryId: id }, 'malformed activity entry skipped');
          continue;
        }
        const frame: NodeActivity = { ...target, type: parsed.data.type, offset: at };
        if (parsed.data.text !== undefined) frame.text = parsed.data.text;
        d.emit(frame);
        if (parsed.data.type === 'terminal') return;
      }
    }
  };

  const done = loop()
    .catch((err: unknown) => {
      if (!stopped) d.logger.warn({ err, invocationId: target.invocationId }, 'activity reader failed');
    })
    .finally(stop);
  return { done, stop };
}
