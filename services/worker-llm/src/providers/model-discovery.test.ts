import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { waitFor } from '@flowline/testing';
import { ambiguityMessage, createModelDiscovery, type ModelDiscoveryOptions } from './model-discovery';

/** A discovery over a scripted `GET /models`: each answer is a list, or an Error to throw. */
function discoveryOver(answers: (string[] | Error)[], opts: Partial<ModelDiscoveryOptions> = {}) {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as { level: number; msg: string }) });
  let calls = 0;
  const d = createModelDiscovery({
    list: async () => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
    retryMinMs: 5,
    retryMaxMs: 20,
    logger,
    ...opts,
  });
  return { d, lines, calls: () => calls };
}

describe('model discovery (LLM_MODEL unset)', () => {
  it('uses the one model the provider lists, and logs it once', async () => {
    const { d, lines, calls } = discoveryOver([['only-model']]);
    expect(await d.refresh()).toEqual({ kind: 'resolved', model: 'only-model' });
    expect(await d.refresh()).toEqual({ kind: 'resolved', model: 'only-model' });
    expect(calls()).toBe(1);
    expect(lines.filter((l) => l.msg.includes('using the only model'))).toHaveLength(1);
  });

  it('calls several models ambiguous, naming LLM_MODEL and at most five ids', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const { d, lines } = discoveryOver([ids]);
    expect(await d.refresh()).toEqual({ kind: 'ambiguous', models: ids });
    expect(ambiguityMessage(ids)).toBe(
      'LLM_MODEL: unset, and the provider at LLM_BASE_URL serves 7 models (a, b, c, d, e, … 2 more): set LLM_MODEL to one of them',
    );
    expect(ambiguityMessage(['x', 'y'])).toMatch(/serves 2 models \(x, y\)/);
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual([ambiguityMessage(ids)]);
  });

  it('waits while the provider does not answer or lists nothing, then settles in the background with backoff', async () => {
    const { d, lines, calls } = discoveryOver([new Error('ECONNREFUSED'), new Error('ECONNREFUSED'), [], [], ['late-model']]);
    expect(await d.refresh()).toEqual({ kind: 'waiting', why: 'unavailable' });
    d.start();
    try {
      await waitFor(() => d.state().kind === 'resolved', { timeoutMs: 5_000, description: 'discovery resolved' });
    } finally {
      d.stop();
    }
    expect(d.state()).toEqual({ kind: 'resolved', model: 'late-model' });
    expect(calls()).toBe(5);
    // one line per change of state, not per retry
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(/does not answer GET \/models yet/),
      expect.stringMatching(/lists no model yet/),
      expect.stringMatching(/using the only model/),
    ]);
  });

  it('reports ambiguity found in the background to onAmbiguous, never one found before start', async () => {
    const seen: string[][] = [];
    const { d } = discoveryOver([new Error('down'), ['a', 'b']], { onAmbiguous: (m) => void seen.push(m) });
    await d.refresh();
    d.start();
    try {
      await waitFor(() => seen.length === 1, { timeoutMs: 5_000, description: 'ambiguity reported' });
    } finally {
      d.stop();
    }
    expect(seen).toEqual([['a', 'b']]);

    const early: string[][] = [];
    const boot = discoveryOver([['a', 'b']], { onAmbiguous: (m) => void early.push(m) });
    expect((await boot.d.refresh()).kind).toBe('ambiguous');
    expect(early).toEqual([]);
  });

  it('shares one request between concurrent callers', async () => {
    let release!: (ids: string[]) => void;
    let calls = 0;
    const d = createModelDiscovery({
      list: () => {
        calls++;
        return new Promise<string[]>((r) => (release = r));
      },
      retryMinMs: 5,
      retryMaxMs: 20,
      logger: pino({ level: 'silent' }),
    });
    const both = Promise.all([d.refresh(), d.refresh()]);
    release(['m']);
    expect(await both).toEqual([{ kind: 'resolved', model: 'm' }, { kind: 'resolved', model: 'm' }]);
    expect(calls).toBe(1);
  });
});
