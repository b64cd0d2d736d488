/**
 * A streaming reader of the one `file` part of a multipart/form-data body (RFC 7578), for
 * uploads: the part's bytes are handed on as they arrive, never gathered, so an upload of
 * any size holds about one network chunk plus the boundary in memory. Other parts before
 * it are skipped; what follows the file part is not read (the keep-alive guard drains it).
 */
import { ValidationFailedError } from './errors';

/** Most header bytes one part may carry before its content. */
const MAX_PART_HEADER_BYTES = 16 * 1024;

export interface FilePart {
  /** the part's `filename` (the file's name as the client gave it) */
  name: string;
  /** the part's Content-Type, `application/octet-stream` when absent */
  contentType: string;
  /** the part's content, streamed; errors with ValidationFailed when the body ends before the closing boundary */
  content: AsyncIterable<Uint8Array>;
}

function invalid(message: string): ValidationFailedError {
  return new ValidationFailedError(message, [{ key: 'file', message }]);
}

/** The boundary of a multipart/form-data Content-Type; throws ValidationFailed for any other type. */
export function multipartBoundary(contentType: string | undefined): string {
  const type = contentType ?? '';
  const m = /^\s*multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(type);
  if (!m) throw invalid('the body must be multipart/form-data (with a boundary) holding one `file` part');
  return (m[1] ?? m[2])!;
}

/** Pulls bytes from a body stream into a growing buffer on demand. */
class Pull {
  buf: Buffer = Buffer.alloc(0);
  done = false;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}
  /** Reads one more chunk; false at the end of the body. */
  async more(): Promise<boolean> {
    if (this.done) return false;
    const r = await this.reader.read();
    if (r.done) {
      this.done = true;
      return false;
    }
    this.buf = this.buf.byteLength === 0 ? Buffer.from(r.value) : Buffer.concat([this.buf, r.value]);
    return true;
  }
  /** Index of `needle` in the buffer, reading on until found (at most `limit` bytes held); -1 at the end of the body. */
  async find(needle: Buffer, limit: number): Promise<number> {
    for (;;) {
      const at = this.buf.indexOf(needle);
      if (at >= 0) return at;
      if (this.buf.byteLength > limit) return -2;
      if (!(await this.more())) return -1;
    }
  }
}

function headerValue(headers: string, name: string): string | undefined {
  for (const line of headers.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) return line.slice(colon + 1).trim();
  }
  return undefined;
}

function dispositionParam(disposition: string, param: string): string | undefined {
  const m = new RegExp(`;\\s*${param}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition) ?? new RegExp(`;\\s*${param}=([^;\\s]+)`, 'i').exec(disposition);
  return m ? m[1]!.replace(/\\(.)/g, '$1') : undefined;
}

/**
 * Finds the `file` part of a multipart body and streams its content.
 * @throws ValidationFailedError when the body is not multipart, a part header is malformed or too long, or no `file` part has a filename
 */
export async function readFilePart(body: ReadableStream<Uint8Array> | null, contentType: string | undefined): Promise<FilePart> {
  const boundary = multipartBoundary(contentType);
  if (body === null) throw invalid('the body is empty: send one `file` part');
  const pull = new Pull(body.getReader());
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // the first boundary may open the body (no CRLF before it)
  pull.buf = Buffer.from('\r\n');
  let at = await pull.find(delimiter, MAX_PART_HEADER_BYTES);
  for (;;) {
    if (at < 0) throw invalid('no `file` part found in the multipart body');
    pull.buf = pull.buf.subarray(at + delimiter.byteLength);
    while (pull.buf.byteLength < 2 && (await pull.more()));
    if (pull.buf.subarray(0, 2).toString('latin1') === '--') throw invalid('no `file` part found in the multipart body');
    const end = await pull.find(Buffer.from('\r\n\r\n'), MAX_PART_HEADER_BYTES);
    if (end < 0) throw invalid(end === -2 ? `a part's headers exceed ${MAX_PART_HEADER_BYTES} bytes` : 'the multipart body ends inside part headers');
    const headers = pull.buf.subarray(0, end).toString('utf8');
    pull.buf = pull.buf.subarray(end + 4);
    const disposition = headerValue(headers, 'content-disposition') ?? '';
    if (dispositionParam(disposition, 'name') === 'file') {
      const name = dispositionParam(disposition, 'filename');
      if (name === undefined || name.trim() === '') throw invalid('the `file` part has no filename');
      if (name.length > 255) throw invalid('the filename is longer than 255 characters');
      const type = headerValue(headers, 'content-type') ?? 'application/octet-stream';
      return { name, contentType: type.slice(0, 255), content: partContent(pull, delimiter) };
    }
    // another field: skip its content up to the next delimiter, keeping only a delimiter's worth
    for (;;) {
      const next = pull.buf.indexOf(delimiter);
      if (next >= 0) {
        at = next;
        break;
      }
      pull.buf = pull.buf.subarray(Math.max(0, pull.buf.byteLength - delimiter.byteLength));
      if (!(await pull.more())) {
        at = -1;
        break;
      }
    }
  }
}

/** The part's bytes up to the delimiter; the last `delimiter.length` bytes are held back until the next read shows they are not the delimiter. */
async function* partContent(pull: Pull, delimiter: Buffer): AsyncGenerator<Uint8Array> {
  for (;;) {
    const at = pull.buf.indexOf(delimiter);
    if (at >= 0) {
      if (at > 0) yield pull.buf.subarray(0, at);
      pull.buf = pull.buf.subarray(at);
      return;
    }
    const safe = pull.buf.byteLength - (delimiter.byteLength - 1);
    if (safe > 0) {
      yield pull.buf.subarray(0, safe);
      pull.buf = pull.buf.subarray(safe);
    }
    if (!(await pull.more())) throw invalid('the multipart body ends before the `file` part is closed');
  }
}
