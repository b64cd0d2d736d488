import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { gatherAttachments, loadAttachmentResolver, type AttachmentResolver } from './attachment-resolver';
import { LlmError } from './errors';

const logLines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
const ctx = (signal = new AbortController().signal) => ({ runId: 'r1', nodeKey: 'n1', signal });
const input = (...names: [string, 'text' | 'image'][]) => ({
  text: 'hi',
  attachments: names.map(([name, kind]) => ({ fileId: `id-${name}`, name, kind, bytes: 5 })),
});

describe('loadAttachmentResolver', () => {
  it('loads a module exporting resolveAttachment', async () => {
    const resolve = await loadAttachmentResolver('./test/fixtures/attachment-resolver.ts');
    expect(await resolve({ fileId: 'f-alpha', name: 'a', kind: 'text', bytes: 1 }, ctx())).toEqual({ text: expect.stringContaining('Alpha') });
  });

  it('refuses a module that fails to load or has no resolveAttachment, naming the option', async () => {
    await expect(loadAttachmentResolver('./test/fixtures/missing-resolver.ts')).rejects.toThrow(/^ATTACHMENT_RESOLVER_MODULE: cannot load/);
    await expect(loadAttachmentResolver('./test/fixtures/not-a-resolver.ts')).rejects.toThrow(/^ATTACHMENT_RESOLVER_MODULE: .* exports no resolveAttachment/);
  });
});

describe('gatherAttachments', () => {
  it('is null for a run input without attachments', async () => {
    const never: AttachmentResolver = () => Promise.reject(new Error('must not be called'));
    expect(await gatherAttachments({ resolver: never, maxTextBytes: 100 }, { text: 'hi' }, ctx(), logger)).toBeNull();
    expect(await gatherAttachments({ resolver: never, maxTextBytes: 100 }, { text: 'hi', attachments: [] }, ctx(), logger)).toBeNull();
  });

  it('skips everything without a resolver', async () => {
    const out = await gatherAttachments({ resolver: null, maxTextBytes: 100 }, input(['a.md', 'text']), ctx(), logger);
    expect(out).toMatchObject({ section: '', skipped: ['a.md'] });
  });

  it('skips a throwing resolver, a non-{text} answer, and an image answered with text', async () => {
    const asked: string[] = [];
    const resolver: AttachmentResolver = async (ref, c) => {
      asked.push(ref.name);
      expect(c).toMatchObject({ runId: 'r1', nodeKey: 'n1' });
      if (ref.name === 'boom.md') throw new Error('down');
      if (ref.name === 'odd.md') return { text: 42 } as unknown as { text: string };
      // a text answer for an image reference cannot be used
      return { text: `body of ${ref.name}` };
    };
    const out = await gatherAttachments(
      { resolver, maxTextBytes: 1_000 },
      input(['ok.md', 'text'], ['boom.md', 'text'], ['pic.png', 'image'], ['odd.md', 'text']),
      ctx(),
      logger,
    );
    expect(asked.sort()).toEqual(['boom.md', 'odd.md', 'ok.md', 'pic.png']);
    expect(out?.skipped).toEqual(['boom.md', 'pic.png', 'odd.md']);
    expect(out?.section).toContain('body of ok.md');
    expect(out?.section).toMatch(/^## Attachments\n/);
  });

  it('logs counts only, never names or content', async () => {
    logLines.length = 0;
    const resolver: AttachmentResolver = () => Promise.resolve({ text: 'SECRET-BODY' });
    await gatherAttachments({ resolver, maxTextBytes: 1_000 }, input(['secret-name.md', 'text'], ['gone.md', 'image']), ctx(), logger);
    const text = logLines.join('\n');
    expect(text).toContain('"attachments":2');
    expect(text).toContain('"skipped":1');
    expect(text).not.toContain('SECRET-BODY');
    expect(text).not.toContain('secret-name');
    expect(text).not.toContain('gone.md');
  });

  it('stops waiting for a resolver that never answers when the node signal fires, and ends with that signal', async () => {
    const controller = new AbortController();
    const hang: AttachmentResolver = () => new Promise(() => {});
    const pending = gatherAttachments({ resolver: hang, maxTextBytes: 100 }, input(['slow.md', 'text']), ctx(controller.signal), logger);
    controller.abort(new LlmError('Timeout', 'the attempt deadline passed'));
    await expect(pending).rejects.toMatchObject({ failureClass: 'Timeout' });
  });
});
