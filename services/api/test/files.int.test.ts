import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgFileStore } from '@flowline/db';
import { KEYS, startHarness, type Harness } from './harness';

const MiB = 1024 * 1024;
const CAP = 3 * MiB;
const BOUNDARY = 'flowline-test-boundary';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxUploadBytes: CAP });
});
afterAll(async () => {
  await h.close();
});

/** A multipart body with a `note` field then the `file` part, streamed in `chunks` pieces of `chunkBytes` random bytes (no Content-Length). */
function streamedUpload(name: string, type: string, chunks: number, chunkBytes: number, extraBytes = 0): { body: ReadableStream<Uint8Array>; sha256: string; bytes: number } {
  const parts: Buffer[] = [];
  for (let i = 0; i < chunks; i++) parts.push(randomBytes(i === chunks - 1 ? chunkBytes + extraBytes : chunkBytes));
  const hash = createHash('sha256');
  for (const p of parts) hash.update(p);
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nignored\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const pieces = [head, ...parts, tail];
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]!);
      else controller.close();
    },
  });
  return { body, sha256: hash.digest('hex'), bytes: parts.reduce((n, p) => n + p.byteLength, 0) };
}

async function upload(body: RequestInit['body'], headers: Record<string, string> = {}, token: string = KEYS.a) {
  const res = await h.app.request('/v1/files', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function counts(): Promise<{ files: number; chunks: number }> {
  const { rows } = await h.db.pool.query<{ files: number; chunks: number }>(
    'select (select count(*)::int from files) as files, (select count(*)::int from file_chunks) as chunks',
  );
  return rows[0]!;
}

describe('POST /v1/files', () => {
  it('stores a form upload, answers its id, size, hash and kind, and reads back only for its tenant', async () => {
    const text = 'quarterly numbers: 42\n';
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'notes.txt');
    const up = await upload(form);
    expect(up.status).toBe(201);
    expect(up.body).toEqual({
      fileId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'notes.txt',
      bytes: Buffer.byteLength(text),
      sha256: createHash('sha256').update(text).digest('hex'),
      contentType: 'text/plain',
      kind: 'text',
    });
    const got = await h.call('GET', `/v1/files/${up.body.fileId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(up.body);
    // another tenant's file, and an id that is no uuid, read as absent
    const other = await h.call('GET', `/v1/files/${up.body.fileId}`, { token: KEYS.b });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NotFound');
    expect((await h.call('GET', '/v1/files/not-a-uuid')).status).toBe(404);
    // the store answers the same: nothing for tenant B, the content for tenant A
    const store = pgFileStore(h.db.pool);
    expect(await store.open('tenantB', up.body.fileId)).toBeNull();
    const opened = await store.open('tenantA', up.body.fileId);
    const read: Buffer[] = [];
    for await (const c of opened!.content) read.push(c);
    expect(Buffer.concat(read).toString('utf8')).toBe(text);
  });

  it('marks an image/* upload as an image', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'dot.png');
    const up = await upload(form);
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ kind: 'image', contentType: 'image/png', bytes: 4 });
  });

  it('streams a multi-MB upload up to the cap into chunks, the hash over every byte', async () => {
    const before = await counts();
    const u = streamedUpload('big.bin', 'application/octet-stream', 48, 64 * 1024);
    expect(u.bytes).toBe(CAP);
    const up = await upload(u.body, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ bytes: CAP, sha256: u.sha256, name: 'big.bin', kind: 'text' });
    const after = await counts();
    // kept as 256 KiB rows, never one value of the whole file
    expect(after.chunks - before.chunks).toBe(CAP / (256 * 1024));
    const opened = await pgFileStore(h.db.pool).open('tenantA', up.body.fileId);
    const hash = createHash('sha256');
    for await (const c of opened!.content) hash.update(c);
    expect(hash.digest('hex')).toBe(u.sha256);
  });

  it('takes a body announced beyond the 1 MiB JSON cap and the tenant write-bytes bound', async () => {
    const content = randomBytes(2 * MiB + 5);
    const body = Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n`),
      content,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]);
    const up = await upload(body, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(body.byteLength) });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ bytes: content.byteLength, sha256: createHash('sha256').update(content).digest('hex') });
  });

  it('refuses content past MAX_UPLOAD_BYTES with 413 and keeps nothing', async () => {
    const before = await counts();
    const u = streamedUpload('huge.bin', 'application/octet-stream', 48, 64 * 1024, 1);
    const up = await upload(u.body, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
    expect(up.status).toBe(413);
    expect(up.body.error.code).toBe('PayloadTooLarge');
    // refused by MAX_UPLOAD_BYTES, not by the 1 MiB cap of JSON bodies
    expect(up.body.error.message).toContain(String(CAP));
    expect(await counts()).toEqual(before);
  });

  it('refuses a body that is not multipart or has no file part with 400 ValidationFailed', async () => {
    const json = await upload(JSON.stringify({ file: 'x' }), { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe('ValidationFailed');
    const form = new FormData();
    form.append('other', 'value');
    const none = await upload(form);
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('ValidationFailed');
    const cut = await upload(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nno end`, {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    });
    expect(cut.status).toBe(400);
    expect(cut.body.error.code).toBe('ValidationFailed');
  });
});
