import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger';
import { runLoop, runPasses, type Service } from './service';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger('test', { destination, level: 'debug' }) };
}

async function until(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('runLoop', () => {
  it('loops at once while runOnce reports more work and sleeps when it reports none', async () => {
    const calls: number[] = [];
    let remaining = 5;
    const svc: Service = { start() {}, stop() {}, runOnce: async () => (calls.push(1), --remaining > 0) };
    const { logger } = capture();
    const h = runLoop(svc, { idleMs: 60_000, logger });
    await until(() => calls.length === 5);
    // idle for a minute now: only a wake brings the next call
    h.wake();
    await until(() => calls.length === 6);
    await h.stop();
  });

  it('logs errors, backs off and keeps going', async () => {
    let n = 0;
    const svc: Service = {
      start() {},
      stop() {},
      runOnce: async () => {
        n++;
        if (n <= 2) throw new Error('boom');
        return false;
      },
    };
    const { lines, logger } = capture();
    const h = runLoop(svc, { idleMs: 60_000, logger, backoff: { initialMs: 1, maxMs: 2 } });
    await until(() => n >= 3);
    await h.stop();
    const failures = lines.filter((l) => l.msg === 'loop iteration failed');
    expect(failures.map((l) => l.failures)).toEqual([1, 2]);
    expect(lines.some((l) => l.msg === 'loop recovered')).toBe(true);
  });

  it('starts the service before the first runOnce and stops it after the last', async () => {
    const order: string[] = [];
    const svc: Service = {
      start: () => void order.push('start'),
      stop: () => void order.push('stop'),
      runOnce: async () => (order.push('run'), false),
    };
    const h = runLoop(svc, { idleMs: 60_000, logger: capture().logger });
    await until(() => order.includes('run'));
    await h.stop();
    expect(order).toEqual(['start', 'run', 'stop']);
  });
});

describe('createLogger', () => {
  it('censors secrets', () => {
    const { lines, logger } = capture();
    logger.info(
      { config: { DATABASE_URL: 'postgres://u:pw@h/db', LLM_API_KEY: 'sk-1' }, token: 't' },
      'boot',
    );
    const line = JSON.stringify(lines[0]);
    expect(line).not.toContain('pw@h');
    expect(line).not.toContain('sk-1');
    expect(line).not.toContain('"t"');
  });
});

describe('runPasses', () => {
  it('tells a pass in progress that the loop is stopping, and stop waits for that pass to end', async () => {
    const { logger } = capture();
    const seen: boolean[] = [];
    let inPass = false;
    let ended = false;
    const loop = runPasses(
      async (stopping) => {
        inPass = true;
        seen.push(stopping());
        await until(stopping);
        seen.push(stopping());
        ended = true;
        return false;
      },
      { idleMs: 60_000, logger },
    );
    await until(() => inPass);
    await loop.stop();
    expect(ended).toBe(true);
    expect(seen).toEqual([false, true]);
  });
});
