/**
 * Files (attachments of chat messages): `POST /v1/files` streams the one `file` part of a
 * multipart/form-data body into the deployment's file store (libs/db store/files.ts) —
 * refused 413 PayloadTooLarge past MAX_UPLOAD_BYTES with nothing kept — and answers the
 * file's id, size, SHA-256 and kind; `GET /v1/files/{id}` reads that metadata back. Both
 * are tenant-scoped: another tenant's file id reads as 404. The upload route is exempt
 * from the 1 MiB JSON body cap and parse (body.ts `isStreamedUpload`): its body is never
 * held whole.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createRoute, z } from '@hono/zod-openapi';
import { FileTooLargeError, pgFileStore, type FileStore } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { sendJson } from '../body';
import { NotFoundError, PayloadTooLargeError } from '../errors';
import { readFilePart } from '../multipart';
import { ErrorSchema, errorResponses, jsonContent } from '../schemas';

/** Default of MAX_UPLOAD_BYTES (10 MiB). */
export const DEFAULT_MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

const tags = ['files'];

const FileSchema = z
  .object({
    fileId: z.string().openapi({ format: 'uuid' }),
    name: z.string().openapi({ description: 'the filename of the uploaded part' }),
    bytes: z.number().int().openapi({ description: 'size of the content, bytes' }),
    sha256: z.string().openapi({ description: 'lowercase hex SHA-256 of the content' }),
    contentType: z.string().openapi({ description: "the part's Content-Type (application/octet-stream when it had none)" }),
    kind: z.enum(['text', 'image']).openapi({ description: '`image` for an image/* content type, else `text`; pass it on as the attachment kind' }),
  })
  .openapi('File');

const FileParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, format: 'uuid' }) });

const getRoute = createRoute({
  method: 'get', path: '/v1/files/{id}', tags, security: [{ bearer: [] }],
  operationId: 'getFile',
  summary: "An uploaded file's metadata",
  request: { params: FileParam },
  responses: { 200: jsonContent(FileSchema, 'the file'), ...errorResponses },
});

function present(f: { fileId: string; name: string; bytes: number; sha256: string; contentType: string; kind: 'text' | 'image' }) {
  return { fileId: f.fileId, name: f.name, bytes: f.bytes, sha256: f.sha256, contentType: f.contentType, kind: f.kind };
}

/** Registers the file routes; `store` defaults to the Postgres store over `deps.pool`. */
export function registerFileRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const store: FileStore = deps.files ?? pgFileStore(deps.pool);
  const maxBytes = deps.limits.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;

  // a plain route, documented below: the OpenAPI validator would read the whole form into memory
  app.post('/v1/files', async (c) => {
    const part = await readFilePart(c.req.raw.body, c.req.header('content-type'));
    try {
      const file = await store.put(c.get('tenant'), part.content, { name: part.name, contentType: part.contentType, maxBytes });
      return sendJson(201, present(file));
    } catch (err) {
      if (err instanceof FileTooLargeError) throw new PayloadTooLargeError(maxBytes);
      throw err;
    }
  });
  app.openAPIRegistry.registerPath({
    method: 'post', path: '/v1/files', tags, security: [{ bearer: [] }],
    operationId: 'uploadFile',
    summary: 'Upload a file (an attachment for a chat message)',
    description:
      'A multipart/form-data body with one `file` part (its filename and Content-Type are kept), streamed into the file ' +
      'store and hashed (SHA-256) as it arrives. Content past MAX_UPLOAD_BYTES is refused 413 PayloadTooLarge and nothing ' +
      'is kept. The answer is what a chat send takes as an attachment: `{ fileId, name, kind, bytes }`.',
    request: {
      body: {
        required: true,
        content: { 'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } } },
      },
    },
    responses: {
      201: jsonContent(FileSchema, 'the stored file'),
      ...errorResponses,
      413: jsonContent(ErrorSchema, 'PayloadTooLarge: the content exceeds MAX_UPLOAD_BYTES (nothing kept)'),
    },
  });

  app.openapi(getRoute, async (c) => {
    const file = await store.head(c.get('tenant'), c.req.valid('param').id);
    if (!file) throw new NotFoundError('file');
    return sendJson(200, present(file));
  });
}
