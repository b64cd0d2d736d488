/**
 * The tenant's audit log (`audit` scope): `GET /v1/audit` pages it newest first with filters,
 * `GET /v1/audit/export` (or `GET /v1/audit` with `Accept: application/x-ndjson`) streams every
 * matching row oldest first as NDJSON, `GET /v1/audit/verify` walks the hash chain and names
 * the first sequence where it breaks. Each read first chains the tenant's ready rows
 * (audit/chainer.ts), so it covers every request answered before it; with `pending=true` the
 * list shows the rows committed but not chained yet (no `seq`).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { exportAudit, listAudit, verifyAudit, type AuditFilter } from '@flowline/db';
import type { AppDeps, AppEnv } from '../context';
import { jsonText, sendJson } from '../body';
import { isStorableId, pageLimit, requireCursor } from '../present';
import { INT4_MAX, INT4_MIN, jsonContent } from '../schemas';
import { v1Route } from '../v1-route';
import type { AuditChainer, AuditOptions } from '../audit/chainer';

export const NDJSON = 'application/x-ndjson';

const AuditRecordSchema = z
  .object({
    seq: z.number().int().nullable().openapi({ description: "the row's place in the tenant's chain; null while pending (committed, not chained yet)" }),
    at: z.string().openapi({ format: 'date-time', description: 'when the change committed (UTC, microseconds)' }),
    principal: z.string().openapi({ description: "who acted: the key's principal, 'anonymous' without keys, or a keyless route's credential (webhook:<id>, link:<id>, the approver an approval link names)" }),
    keyPrefix: z.string().nullable().openapi({ description: 'the prefix of the managed API key used, when there is one' }),
    action: z.string().openapi({ example: 'definition.update', description: 'the stable dotted name of the route' }),
    resourceType: z.string().openapi({ example: 'definition' }),
    resourceId: z.string().nullable(),
    requestId: z.string().openapi({ description: 'the X-Request-Id the request sent (or was answered)' }),
    clientAddress: z.string().nullable(),
    status: z.number().int().nullable().openapi({ description: 'the HTTP status answered; null when the process ended before answering' }),
    errorCode: z.string().nullable().openapi({ description: 'the error code answered (NotFound, Forbidden…); null on success' }),
    patch: z.unknown().openapi({ description: 'a definition change as an RFC 6902 JSON Patch, secret values "[redacted]"; null otherwise' }),
    prevHash: z.string().nullable(),
    hash: z.string().nullable().openapi({ description: 'sha256 (hex) of prevHash and the row' }),
  })
  .openapi('AuditRecord');

const AuditListSchema = z.object({ items: z.array(AuditRecordSchema), nextCursor: z.string().nullable() }).openapi('AuditList');

const AuditVerificationSchema = z
  .object({
    ok: z.boolean(),
    checked: z.number().int().openapi({ description: 'rows whose hash was recomputed' }),
    prunedSeq: z.number().int().openapi({ description: 'the last row pruned by AUDIT_RETENTION_DAYS (its hash is the checkpoint the kept chain starts from); 0 = none' }),
    headSeq: z.number().int().openapi({ description: 'the last chained row' }),
    pending: z.number().int().openapi({ description: 'rows committed and not chained yet (not covered)' }),
    brokenAt: z.number().int().nullable().openapi({ description: 'the first seq where the chain breaks' }),
    reason: z.enum(['missing', 'hashMismatch', 'prevHashMismatch', 'headMismatch']).nullable(),
  })
  .openapi('AuditVerification');

/** A filter's text: Postgres cannot hold U+0000 or a lone surrogate, so such text is a 400, not a query. */
const filterText = (max: number) => z.string().min(1).max(max).refine(isStorableId, 'must not contain U+0000 or a lone UTF-16 surrogate');

const AuditQuery = z.object({
  principal: filterText(200).optional(),
  action: filterText(200).optional().openapi({ description: 'an action, or a prefix ending in `.*` (run.*)' }),
  resource: filterText(300).optional().openapi({ description: '`type` or `type:id` (run:0b6c…)' }),
  from: z.string().datetime({ offset: true }).optional().openapi({ description: 'rows at or after this instant' }),
  to: z.string().datetime({ offset: true }).optional().openapi({ description: 'rows before this instant' }),
});

const ListQuery = AuditQuery.extend({
  limit: z.coerce.number().int().min(INT4_MIN).max(INT4_MAX).optional().openapi({ example: 50 }),
  cursor: z.string().optional(),
  pending: z.enum(['true', 'false']).optional().openapi({ description: 'true: the first page starts with the rows not chained yet' }),
});

const listRoute = v1Route.audit('get', '/v1/audit', {
  operationId: 'listAudit',
  summary: "The tenant's audit log, newest first",
  description: `Filters combine; \`cursor\` is the previous page's \`nextCursor\`. With \`Accept: ${NDJSON}\` answers as GET /v1/audit/export does.`,
  request: { query: ListQuery },
  responses: {
    200: {
      description: 'a page of audit rows (or, asked for, every matching row as NDJSON)',
      content: { 'application/json': { schema: AuditListSchema }, [NDJSON]: { schema: AuditRecordSchema } },
    },
  },
});

const exportRoute = v1Route.audit('get', '/v1/audit/export', {
  operationId: 'exportAudit',
  summary: 'Every matching audit row as NDJSON, oldest first',
  request: { query: AuditQuery },
  responses: { 200: { description: 'one AuditRecord JSON per line', content: { [NDJSON]: { schema: AuditRecordSchema } } } },
});

const verifyRoute = v1Route.audit('get', '/v1/audit/verify', {
  operationId: 'verifyAudit',
  summary: "Proves the tenant's audit chain unaltered, or names where it breaks",
  description:
    'Recomputes every kept row\'s hash from the retention checkpoint to the chain\'s head: an edited row breaks at its seq, a deleted one at its seq (or the head).',
  responses: { 200: jsonContent(AuditVerificationSchema, 'the verdict') },
});

const CURSOR_TAG = 'audit:';
const encodeCursor = (seq: number): string => Buffer.from(`${CURSOR_TAG}${seq}`, 'utf8').toString('base64url');
const decodeCursor = (cursor: string): number | null => {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^audit:([1-9]\d{0,15})$/.exec(text);
  return m ? Number(m[1]) : null;
};

function filterOf(q: z.infer<typeof AuditQuery>): AuditFilter {
  const f: AuditFilter = {};
  if (q.principal !== undefined) f.principal = q.principal;
  if (q.action !== undefined) f.action = q.action;
  if (q.resource !== undefined) {
    const i = q.resource.indexOf(':');
    if (i < 0) f.resourceType = q.resource;
    else {
      f.resourceType = q.resource.slice(0, i);
      f.resourceId = q.resource.slice(i + 1);
    }
  }
  if (q.from !== undefined) f.from = q.from;
  if (q.to !== undefined) f.to = q.to;
  return f;
}

/** Registers the audit routes; `deps.audit` carries the chainer createApp made. */
export function registerAuditRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps & { audit: { chainer: AuditChainer; options: AuditOptions } }): void {
  const { pool } = deps;
  const chainer = deps.audit.chainer;

  const ndjson = (tenant: string, filter: AuditFilter): Response => {
    const rows = exportAudit(pool, tenant, filter);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await rows.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value.map((r) => `${jsonText(r)}\n`).join('')));
        } catch (err) {
          deps.logger.warn({ err }, 'audit export ended early');
          controller.error(err);
        }
      },
      async cancel() {
        await rows.return(undefined);
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': `${NDJSON}; charset=UTF-8` } });
  };

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const tenant = c.get('tenant');
    await chainer.kick(tenant);
    if ((c.req.header('accept') ?? '').includes(NDJSON)) return ndjson(tenant, filterOf(q)) as never;
    const before = requireCursor(q.cursor, decodeCursor);
    const page = await listAudit(pool, tenant, filterOf(q), pageLimit(q.limit), before, q.pending === 'true');
    return sendJson(200, { items: page.items, nextCursor: page.nextBefore === null ? null : encodeCursor(page.nextBefore) });
  });

  app.openapi(exportRoute, async (c) => {
    const tenant = c.get('tenant');
    await chainer.kick(tenant);
    return ndjson(tenant, filterOf(c.req.valid('query'))) as never;
  });

  app.openapi(verifyRoute, async (c) => {
    const tenant = c.get('tenant');
    await chainer.kick(tenant);
    return sendJson(200, await verifyAudit(pool, tenant));
  });
}
