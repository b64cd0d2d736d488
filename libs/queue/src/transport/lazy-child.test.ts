import { describe, expect, it } from 'vitest';
import { lazyChild } from './lazy-child';

/** A logger that records the children it makes and the lines they write (each line with its child's bindings). */
function recordingLogger() {
  const children: Record<string, unknown>[] = [];
  const lines: { bindings: Record<string, unknown>; msg: string }[] = [];
  class Child {
    constructor(readonly bindings: Record<string, unknown>) {}
    level = 'info';
    info(msg: string) {
      lines.push({ bindings: this.bindings, msg });
    }
  }
  return {
    children,
    lines,
    child(bindings: Record<string, unknown>) {
      children.push(bindings);
      return new Child(bindings);
    },
  };
}

describe('lazyChild', () => {
  it('makes no child until a member of it is used, even when handed on', () => {
    const logger = recordingLogger();
    const log = lazyChild(logger, { runId: 'r1' });
    const ctx = { log, also: { logger: log } };
    expect(ctx.also.logger).toBe(log);
    expect(logger.children).toEqual([]);
  });

  it('makes one child on first use and sends every call to it, methods bound to it', () => {
    const logger = recordingLogger();
    const log = lazyChild(logger, { runId: 'r1', nodeKey: 'n' });
    const { info } = log;
    info('detached');
    log.info('direct');
    expect(log.level).toBe('info');
    log.level = 'debug';
    expect('info' in log).toBe(true);
    expect(log.level).toBe('debug');
    expect(logger.children).toEqual([{ runId: 'r1', nodeKey: 'n' }]);
    expect(logger.lines).toEqual([
      { bindings: { runId: 'r1', nodeKey: 'n' }, msg: 'detached' },
      { bindings: { runId: 'r1', nodeKey: 'n' }, msg: 'direct' },
    ]);
  });
});
