/**
 * Attachments through a whole cluster (API, dispatcher, LLM worker) and a fake
 * OpenAI-compatible provider over HTTP: files uploaded with POST /v1/files, sent with a
 * chat message to a Chat graph that accepts attachments, reach the model of an LlmCall
 * with `includeAttachments: true` — the text file's content in the prompt, the image as an
 * `image_url` content part — and a model that refuses images fails its node ValidationFailed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startE2eCluster, startFakeLlm, type E2eCluster, type FakeLlmServer } from '@flowline/testing';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

const graph = (model: string) => ({
  kind: 'Chat',
  chat: { acceptsAttachments: true },
  nodes: [
    { key: 'start', kind: 'Start' },
    { key: 'look', kind: 'LlmCall', config: { prompt: 'Describe the attached files.', model, includeAttachments: true, publishToChat: true } },
    { key: 'end', kind: 'End', config: { outcome: 'answered', publishToChat: false } },
  ],
  edges: [
    { key: 'e1', from: 'start', to: 'look' },
    { key: 'e2', from: 'look', to: 'end' },
  ],
});

type Part = { type: string; text?: string; image_url?: { url: string } };

interface Uploaded {
  fileId: string;
  name: string;
  kind: 'text' | 'image';
  bytes: number;
  sha256: string;
}

describe('attachments on a whole cluster', () => {
  let c: E2eCluster;
  let llm: FakeLlmServer;

  beforeAll(async () => {
    llm = await startFakeLlm({
      // the blind model refuses a request that carries an image part, as a text-only server does
      handler: (req) =>
        req.body.model === 'blind-model' && JSON.stringify(req.body.messages).includes('"image_url"')
          ? { status: 400, body: { error: { message: 'this model does not accept image_url content', type: 'invalid_request_error' } } }
          : { content: 'A chart and a note.' },
    });
    c = await startE2eCluster({ dispatchers: 1, toolWorkers: 0, llmWorkers: 1, env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'fake-model' } });
  }, 90_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') process.stdout.write(`${c.lines.slice(-60).join('\n')}\n`);
  });

  afterAll(async () => {
    await c?.close();
    await llm?.close();
  });

  async function upload(name: string, type: string, content: Buffer): Promise<Uploaded> {
    const form = new FormData();
    form.append('file', new Blob([content], { type }), name);
    const res = await fetch(`${c.cluster.apiUrl}/v1/files`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
    return (await res.json()) as Uploaded;
  }

  async function sendWith(definitionId: string, files: Uploaded[]) {
    const id = `conv-${randomUUID()}`;
    const attachments = files.map((f) => ({ fileId: f.fileId, name: f.name, kind: f.kind, bytes: f.bytes }));
    const sent = await c.api.send('POST', `/v1/conversations/${id}/messages`, { definitionId, text: 'What is in these?', requestId: `${id}-1`, attachments });
    expect(sent.status).toBe(202);
    return c.api.waitForRun(sent.body.runId as string, (v) => ['Completed', 'Failed'].includes(v.run.status), 60_000, 'run ended');
  }

  it("uploads a text file and an image and shows both to the LlmCall's model", async () => {
    const note = await upload('note.txt', 'text/plain', Buffer.from('Revenue grew 17% in the third quarter.'));
    const chart = await upload('chart.png', 'image/png', PNG);
    expect(chart.kind).toBe('image');
    const definitionId = await c.api.createDefinition('look-at-files', graph('fake-model'));
    const view = await sendWith(definitionId, [note, chart]);
    expect(view.run.status).toBe('Completed');
    const request = llm.requests.find((r) => JSON.stringify(r.body.messages).includes('Describe the attached files.'))!;
    const user = (request.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')!;
    const parts = user.content as Part[];
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(parts[0]!.text).toContain('Revenue grew 17% in the third quarter.');
    expect(parts[1]!.image_url!.url).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  it('fails the node ValidationFailed when the model refuses the image, naming the file and model', async () => {
    const chart = await upload('refused.png', 'image/png', PNG);
    const definitionId = await c.api.createDefinition('blind', graph('blind-model'));
    const view = await sendWith(definitionId, [chart]);
    expect(view.run.status).toBe('Failed');
    const node = view.nodeRuns.find((n) => n.nodeKey === 'look')!;
    expect(node).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(node.reason).toContain('"refused.png"');
    expect(node.reason).toContain('blind-model');
    expect(node.reason).not.toContain('does not accept');
  });
});
