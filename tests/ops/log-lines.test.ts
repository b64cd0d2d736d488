/**
 * `npm start` shows its services' logs pretty-printed (pino-pretty) on a terminal and as JSON
 * lines anywhere else: the starter's `pretty` switch (set from `process.stdout.isTTY`) formats
 * what the real service processes print.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestRedis, logLineFormatter, startCluster, waitFor } from '@flowline/testing';

const rootDir = fileURLToPath(new URL('../..', import.meta.url));
const line = JSON.stringify({ level: 30, time: 1764600000000, pid: 1, name: 'worker-tool', runId: 'r-1', nodeKey: 'lookup', invocationId: 'i-1', msg: 'tool invocation finished' });

describe('log lines', () => {
  it('passes JSON lines through unchanged when not pretty', () => {
    expect(logLineFormatter({ pretty: false })(line)).toBe(line);
  });

  it('pretty-prints a JSON line with its level, message and ids, and leaves other lines alone', () => {
    const out = logLineFormatter({ pretty: true })(line);
    expect(out).toMatch(/INFO.*\(worker-tool\).*tool invocation finished/);
    expect(out).toContain('{"runId":"r-1","nodeKey":"lookup","invocationId":"i-1"}');
    expect(out).not.toMatch(/^\{/);
    expect(out).not.toContain('\n');
    expect(logLineFormatter({ pretty: true })('plain text')).toBe('plain text');
  });

  it.each([true, false])('formats the lines of a real service process (pretty %s)', async (pretty) => {
    const redis = createTestRedis();
    const lines: string[] = [];
    const cluster = startCluster({
      rootDir,
      databaseUrl: 'postgres://unused',
      redisUrl: redis.url,
      apiPort: 0,
      queuePrefix: redis.prefix,
      pretty,
      processes: [{ label: 'worker-tool', service: 'worker-tool', env: { LOG_LEVEL: 'info' } }],
      onLine: (l) => lines.push(l),
    });
    try {
      const ready = await waitFor(() => lines.find((l) => l.includes('worker-tool ready')) ?? false, { timeoutMs: 60_000, description: 'worker-tool ready' });
      const body = ready.replace(/^\[worker-tool\] /, '');
      if (pretty) {
        expect(body).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(worker-tool\): worker-tool ready/);
      } else {
        expect(JSON.parse(body)).toMatchObject({ level: 30, name: 'worker-tool', msg: 'worker-tool ready' });
      }
    } finally {
      await cluster.stop(5000);
      await redis.cleanup();
    }
  }, 90_000);
});
