import { Readable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgFileStore, runTenantOf, type StoredFile } from '@flowline/db';
import type { Json } from '@flowline/graph';
import { closeLaneQueues, createLaneQueues, enqueueWork, type LaneQueues } from '@flowline/queue';
import {
  cleanupRedisPrefix,
  createTestDatabase,
  insertRunRows,
  startFakeLlm,
  testRedisUrl,
  uniquePrefix,
  type FakeLlmServer,
  type FakeReply,
  type TestDatabase,
} from '@flowline/testing';
import { createToolRegistry } from '@flowline/tools';
import { fileStoreResolver } from '../src/attachment-resolver';
import { createProviderRegistry } from '../src/providers/registry';
import { createLlmWorker, type LlmWorker } from '../src/worker';
import { llmItem, requestsFor, returnValueOf, scriptByModel } from './helpers';

const prefix = uniquePrefix();
const url = testRedisUrl();
// a 1×1 PNG's first bytes: the content does not matter, only that it arrives whole
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

type Part = { type: string; text?: string; image_url?: { url: string } };

/** The user message's content parts of a recorded request (a string content reads as one text part). */
function userParts(body: Record<string, unknown>): Part[] {
  const user = (body.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'user').at(-1)!;
  return typeof user.content === 'string' ? [{ type: 'text', text: user.content }] : (user.content as Part[]);
}

describe('includeAttachments from the file store (in-process worker, real Postgres, fake server over HTTP)', () => {
  let db: TestDatabase;
  let fake: FakeLlmServer;
  let script: (model: string, ...replies: FakeReply[]) => void;
  let redis: Redis;
  let producer: Redis;
  let queues: LaneQueues;
  let worker: LlmWorker;
  let runId: string;
  let notes: StoredFile;
  let dot: StoredFile;
  let foreign: StoredFile;

  async function run(item: ReturnType<typeof llmItem>) {
    await enqueueWork(queues, [item]);
    return (await returnValueOf(queues, item.invocationId)).outcome;
  }

  function item(kind: 'LlmCall' | 'Agent', config: Record<string, Json>, attachments: StoredFile[]) {
    const base = llmItem(kind, config, { runId });
    const runInput = { text: 'look at these', attachments: attachments.map((f) => ({ fileId: f.fileId, name: f.name, kind: f.kind, bytes: f.bytes })) };
    return { ...base, input: { ...base.input, run: { input: runInput } } };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const store = pgFileStore(db.pool, 16);
    const put = (tenant: string, name: string, type: string, content: Buffer) =>
      store.put(tenant, Readable.from([content]), { name, contentType: type, maxBytes: 1_000_000 });
    notes = await put('tenantA', 'notes.txt', 'text/plain', Buffer.from('The quarterly numbers are up by 42 percent.'));
    dot = await put('tenantA', 'dot.png', 'image/png', PNG);
    foreign = await put('tenantB', 'other.txt', 'text/plain', Buffer.from('tenant B secret'));
    runId = await insertRunRows(db.pool, { tenantId: 'tenantA', status: 'Running', finishedAt: null });

    fake = await startFakeLlm();
    script = scriptByModel(fake);
    redis = new Redis(url, { maxRetriesPerRequest: null });
    producer = new Redis(url, { maxRetriesPerRequest: null });
    const providers = createProviderRegistry({
      baseUrl: fake.url,
      defaultModel: 'default-model',
      providers: { blind: { baseUrl: fake.url, vision: false } },
    });
    const resolver = fileStoreResolver(store, (id) => runTenantOf(db.pool, id), { maxImageBytes: 1_000_000, maxTextFileBytes: 1_000_000 });
    worker = createLlmWorker({
      redis,
      providers,
      tools: await createToolRegistry({}),
      logger: pino({ level: 'silent' }),
      prefix,
      concurrency: 2,
      shutdownGraceMs: 1_000,
      attachments: { resolver, maxTextBytes: 4_096 },
    });
    await worker.start();
    queues = createLaneQueues(producer, prefix);
  });

  afterAll(async () => {
    await worker?.stop();
    if (queues) await closeLaneQueues(queues);
    await Promise.all([redis?.quit(), producer?.quit()]);
    await fake?.close();
    await cleanupRedisPrefix(prefix, url);
    await db?.drop();
  });

  it("LlmCall: a text file's content in the section, an image as an image_url part, another tenant's file skipped", async () => {
    script('m-files', { content: 'seen' });
    const outcome = await run(item('LlmCall', { prompt: 'Describe', model: 'm-files', includeAttachments: true }, [notes, dot, foreign]));
    expect(outcome).toMatchObject({ ok: true, output: { text: 'seen', attachmentsSkipped: ['other.txt'] } });
    const parts = userParts(requestsFor(fake, 'm-files')[0]!.body);
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(parts[0]!.text).toContain('The quarterly numbers are up by 42 percent.');
    expect(parts[0]!.text).toContain('"dot.png"');
    expect(parts[0]!.text).not.toContain('tenant B secret');
    expect(parts[1]!.image_url!.url).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  it('Agent: the image part rides on its user message too', async () => {
    script('m-files-agent', { content: 'agent saw it' });
    const outcome = await run(item('Agent', { instructions: 'Look', model: 'm-files-agent', includeAttachments: true }, [dot]));
    expect(outcome).toMatchObject({ ok: true, output: { text: 'agent saw it' } });
    const parts = userParts(requestsFor(fake, 'm-files-agent')[0]!.body);
    expect(parts.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url)).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
  });

  it('sends no file without includeAttachments', async () => {
    script('m-files-off', { content: 'plain' });
    await run(item('LlmCall', { prompt: 'Describe', model: 'm-files-off' }, [notes, dot]));
    const parts = userParts(requestsFor(fake, 'm-files-off')[0]!.body);
    expect(parts).toEqual([{ type: 'text', text: 'Describe' }]);
  });

  it('fails the node ValidationFailed, naming the file and model, when the provider refuses image input', async () => {
    script('m-blind', { status: 400, body: { error: { message: 'Model does not support image input: INSIDE-PROVIDER-TEXT', type: 'invalid_request_error' } } });
    const outcome = await run(item('LlmCall', { prompt: 'Describe', model: 'm-blind', includeAttachments: true }, [dot]));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
    const reason = outcome.ok === false ? outcome.reason : '';
    expect(reason).toContain('"dot.png"');
    expect(reason).toContain('default/m-blind');
    expect(reason).toContain('llm1');
    expect(reason).not.toContain('INSIDE-PROVIDER-TEXT');
  });

  it('fails the node ValidationFailed before any call when its provider is configured without vision', async () => {
    const outcome = await run(item('Agent', { instructions: 'Look', model: 'blind/m-never', includeAttachments: true }, [dot]));
    expect(outcome).toMatchObject({ ok: false, failureClass: 'ValidationFailed' });
    expect(outcome.ok === false && outcome.reason).toContain('blind/m-never');
    expect(outcome.ok === false && outcome.reason).toContain('"dot.png"');
    expect(requestsFor(fake, 'm-never')).toHaveLength(0);
  });
});
