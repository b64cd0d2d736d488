import { describe, expect, it } from 'vitest';
import { ValidationFailedError } from './errors';
import { readFilePart } from './multipart';

const B = 'xyzBOUNDARY';
const TYPE = `multipart/form-data; boundary=${B}`;

/** `text` as a body delivered in pieces of `size` bytes (1 = every split a boundary can suffer). */
function bodyOf(text: string | Buffer, size: number): ReadableStream<Uint8Array> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.byteLength) return c.close();
      c.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

async function contentOf(part: { content: AsyncIterable<Uint8Array> }): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of part.content) chunks.push(c);
  return Buffer.concat(chunks).toString('latin1');
}

describe('readFilePart', () => {
  // content that nearly holds the delimiter: a CRLF, dashes and a boundary prefix
  const tricky = `line one\r\n--xyzBOUND\r\n-${B.slice(0, 5)}\r\n`;
  const body =
    `preamble\r\n--${B}\r\nContent-Disposition: form-data; name="other"\r\n\r\nskip me\r\n` +
    `--${B}\r\nContent-Disposition: form-data; name="file"; filename="a \\"b\\".txt"\r\nContent-Type: text/plain\r\n\r\n${tricky}\r\n--${B}--\r\n`;

  it.each([1, 3, 7, 64, 100_000])('finds the file part and streams its exact bytes in pieces of %i bytes', async (size) => {
    const part = await readFilePart(bodyOf(body, size), TYPE);
    expect(part.name).toBe('a "b".txt');
    expect(part.contentType).toBe('text/plain');
    expect(await contentOf(part)).toBe(tricky);
  });

  it('takes a quoted boundary and a part without Content-Type', async () => {
    const part = await readFilePart(bodyOf(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n\r\nabc\r\n--${B}--`, 2), `multipart/form-data; boundary="${B}"`);
    expect(part.contentType).toBe('application/octet-stream');
    expect(await contentOf(part)).toBe('abc');
  });

  it('refuses another type, no file part, a file part without filename, and a body cut short', async () => {
    await expect(readFilePart(bodyOf('{}', 10), 'application/json')).rejects.toBeInstanceOf(ValidationFailedError);
    await expect(readFilePart(bodyOf(`--${B}\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--${B}--\r\n`, 5), TYPE)).rejects.toBeInstanceOf(ValidationFailedError);
    await expect(readFilePart(bodyOf(`--${B}\r\nContent-Disposition: form-data; name="file"\r\n\r\n1\r\n--${B}--\r\n`, 5), TYPE)).rejects.toBeInstanceOf(ValidationFailedError);
    const cut = await readFilePart(bodyOf(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="c.txt"\r\n\r\nno end`, 4), TYPE);
    await expect(contentOf(cut)).rejects.toBeInstanceOf(ValidationFailedError);
    await expect(readFilePart(bodyOf(`--${B}\r\n${'X-Long: y\r\n'.repeat(3000)}\r\n`, 1000), TYPE)).rejects.toThrow(/headers exceed/);
  });
});
