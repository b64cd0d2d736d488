/**
 * The file store: uploads (POST /v1/files) and the reads of the attachment resolver. One
 * interface, {@link FileStore}, so a deployment could put the content elsewhere (an
 * S3-compatible bucket); the default, {@link pgFileStore}, needs no server beyond the
 * Postgres every replica already has: metadata in `files`, content in `file_chunks` rows of
 * at most `chunkBytes` each. A put writes each chunk as it arrives inside one transaction
 * (a refused or failed upload leaves nothing behind) and a read fetches one chunk per query,
 * so no side holds a whole file in memory. Every read is by (tenant, id).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { withTransaction, type Queryable } from './transaction';

/** What the store keeps about a file (and a put answers). */
export interface StoredFile {
  fileId: string;
  name: string;
  contentType: string;
  /** `image` for an image/* content type, else `text` */
  kind: 'text' | 'image';
  bytes: number;
  /** lowercase hex SHA-256 of the content */
  sha256: string;
}

export interface FilePutOptions {
  name: string;
  contentType: string;
  /** content beyond this many bytes refuses the put with {@link FileTooLargeError}, nothing kept */
  maxBytes: number;
}

/** The content went past `maxBytes`: nothing was kept. */
export class FileTooLargeError extends Error {
  override readonly name = 'FileTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`file content exceeds ${limitBytes} bytes`);
  }
}

export interface FileStore {
  /** Stores `content` as a new file of `tenant`; rejects with FileTooLargeError (nothing kept) past `maxBytes`. */
  put(tenant: string, content: AsyncIterable<Uint8Array>, opts: FilePutOptions): Promise<StoredFile>;
  /** The metadata of a file of `tenant`; null when absent or another tenant's. */
  head(tenant: string, fileId: string): Promise<StoredFile | null>;
  /** The metadata and the content (streamed) of a file of `tenant`; null when absent or another tenant's. */
  open(tenant: string, fileId: string): Promise<{ file: StoredFile; content: AsyncIterable<Buffer> } | null>;
}

/** Default chunk size of {@link pgFileStore}, bytes (256 KiB). */
export const DEFAULT_FILE_CHUNK_BYTES = 256 * 1024;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `image` for image/* content types, `text` for everything else. */
export function fileKindOf(contentType: string): 'text' | 'image' {
  return /^image\//i.test(contentType.trim()) ? 'image' : 'text';
}

interface FileRow {
  id: string;
  name: string;
  content_type: string;
  kind: string;
  bytes: string | number;
  sha256: string;
}

function toFile(r: FileRow): StoredFile {
  return { fileId: r.id, name: r.name, contentType: r.content_type, kind: r.kind === 'image' ? 'image' : 'text', bytes: Number(r.bytes), sha256: r.sha256 };
}

async function headOn(db: Queryable, tenant: string, fileId: string): Promise<StoredFile | null> {
  if (!UUID_RE.test(fileId)) return null;
  const { rows } = await db.query<FileRow>(
    'select id, name, content_type, kind, bytes, sha256 from files where tenant_id = $1 and id = $2',
    [tenant, fileId.toLowerCase()],
  );
  return rows[0] ? toFile(rows[0]) : null;
}

/** The Postgres file store (chunked `bytea` rows; see the module comment). */
export function pgFileStore(pool: Pool, chunkBytes: number = DEFAULT_FILE_CHUNK_BYTES): FileStore {
  return {
    put: (tenant, content, opts) =>
      withTransaction(pool, async (tx) => {
        const id = randomUUID();
        const kind = fileKindOf(opts.contentType);
        // the row first (the chunks reference it); its size and hash are known at the end
        await tx.query("insert into files (id, tenant_id, name, content_type, kind, bytes, sha256) values ($1, $2, $3, $4, $5, 0, '')", [
          id,
          tenant,
          opts.name,
          opts.contentType,
          kind,
        ]);
        const hash = createHash('sha256');
        let total = 0;
        let seq = 0;
        let pending: Buffer[] = [];
        let pendingBytes = 0;
        const flush = async (): Promise<void> => {
          if (pendingBytes === 0) return;
          const data = Buffer.concat(pending, pendingBytes);
          pending = [];
          pendingBytes = 0;
          await tx.query('insert into file_chunks (file_id, seq, data) values ($1, $2, $3)', [id, seq++, data]);
        };
        for await (const part of content) {
          total += part.byteLength;
          // refused at the chunk that crosses the cap: the transaction rolls back, nothing kept
          if (total > opts.maxBytes) throw new FileTooLargeError(opts.maxBytes);
          hash.update(part);
          let rest = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
          while (rest.byteLength > 0) {
            const take = Math.min(rest.byteLength, chunkBytes - pendingBytes);
            // copied: the caller may reuse its buffer once the iterator moves on
            pending.push(Buffer.from(rest.subarray(0, take)));
            pendingBytes += take;
            rest = rest.subarray(take);
            if (pendingBytes === chunkBytes) await flush();
          }
        }
        await flush();
        const sha256 = hash.digest('hex');
        await tx.query('update files set bytes = $2, sha256 = $3 where id = $1', [id, total, sha256]);
        return { fileId: id, name: opts.name, contentType: opts.contentType, kind, bytes: total, sha256 };
      }),
    head: (tenant, fileId) => headOn(pool, tenant, fileId),
    async open(tenant, fileId) {
      const file = await headOn(pool, tenant, fileId);
      if (!file) return null;
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let seq = 0; ; seq++) {
          const { rows } = await pool.query<{ data: Buffer }>('select data from file_chunks where file_id = $1 and seq = $2', [file!.fileId, seq]);
          if (!rows[0]) return;
          yield rows[0].data;
        }
      }
      return { file, content: chunks() };
    },
  };
}

/** The tenant of a run (the attachment resolver reads files by the run's tenant); null when the run is gone. */
export async function runTenantOf(db: Queryable, runId: string): Promise<string | null> {
  if (!UUID_RE.test(runId)) return null;
  const { rows } = await db.query<{ tenant_id: string }>('select tenant_id from runs where id = $1', [runId]);
  return rows[0]?.tenant_id ?? null;
}
