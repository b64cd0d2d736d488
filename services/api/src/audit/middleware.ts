/**
 * The audit middleware: every mutating request of a route in {@link ROUTE_AUDIT_ACTIONS} leaves
 * exactly one row in the audit log.
 *
 * - Before the route runs, the request's entry (tenant, principal, action, resource, request id,
 *   client address) is opened in the request's AsyncLocalStorage scope (libs/db audit-context).
 *   The first transaction the request commits writes it, unchained, just before its COMMIT
 *   (libs/db withTransaction): the change and its record are one commit.
 * - After the answer, the row gets the outcome (HTTP status, error code, a created resource's
 *   id). A request that committed nothing through a transaction — a refusal (400, 403, 404, 409…),
 *   a Redis-only action, a single-statement write — gets its row written here, with its outcome.
 * - Then the tenant's chain is asked for a pass soon (chainer.ts), without holding the answer back.
 *
 * Not recorded: a request without a known tenant (401 before a key names one, a keyless route
 * refused before its credential named its tenant, an unknown route), and a capacity refusal that
 * committed nothing (429/503: admission, rate limit, backlog — writing a row for each would let a
 * flood write to the database the refusal protects; the metrics count them).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { currentAuditEntry, encryptionEnabled, insertAuditRow, recordAuditOutcome, runWithAuditEntry, type AuditEntry } from '@flowline/db';
import type { AppEnv } from '../context';
import { isStorableId } from '../present';
import { auditRoutes, isMutatingMethod, matchAuditRoute, type AuditRoute } from '../route-audit';
import type { AuditChainer } from './chainer';
import { patchForStorage, type PatchOp } from './json-patch';

/** What the middleware writes with. */
export interface AuditDeps {
  pool: Pool;
  logger: Logger;
  chainer: AuditChainer;
}

/** The request id header: taken from the caller when sane, else made; answered either way. */
export const REQUEST_ID_HEADER = 'x-request-id';

const SANE_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

function requestIdOf(header: string | undefined): string {
  return header !== undefined && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** The peer's address as the socket says (no forwarded header is trusted: no proxy is declared trusted). */
function clientAddressOf(c: Context<AppEnv>): string | null {
  const env = c.env as { incoming?: IncomingMessage } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

/** The resource id a path names; null when it names none or one Postgres cannot store (the route refuses it anyway). */
function idFromParams(route: AuditRoute, params: Record<string, string>): string | null {
  const from = route.id ?? (route.params.includes('id') ? 'param:id' : 'none');
  const id = from.startsWith('param:') ? (params[from.slice('param:'.length)] ?? null) : null;
  return id !== null && id.length <= 500 && isStorableId(id) ? id : null;
}

/** A member of the JSON answer (a create's id), or null. */
async function answerMember(res: Response, member: string): Promise<string | null> {
  if (!(res.headers.get('content-type') ?? '').includes('json')) return null;
  try {
    const v = ((await res.clone().json()) as Record<string, unknown>)[member];
    return typeof v === 'string' && isStorableId(v) ? v : null;
  } catch {
    return null;
  }
}

/** The error code of an error answer (`{ error: { code } }`), or null. */
async function errorCodeOf(res: Response): Promise<string | null> {
  if (res.status < 400 || !(res.headers.get('content-type') ?? '').includes('json')) return null;
  try {
    const v = ((await res.clone().json()) as { error?: { code?: unknown } }).error?.code;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** Installs on the audited paths (after auth on /v1: the key names tenant and principal). */
export function auditRequests(deps: AuditDeps): MiddlewareHandler<AppEnv> {
  const routes = auditRoutes();
  return async (c, next) => {
    if (!isMutatingMethod(c.req.method)) return next();
    const hit = matchAuditRoute(routes, c.req.method, c.req.path);
    if (hit === null) return next();
    const { route, params } = hit;
    const requestId = requestIdOf(c.req.header(REQUEST_ID_HEADER));
    const entry: AuditEntry = {
      tenant: route.keyed ? c.get('tenant') : null,
      principal: route.keyed ? c.get('principal').id : 'anonymous',
      keyPrefix: route.keyed ? (c.get('principal').managed?.prefix ?? null) : null,
      action: route.action,
      resourceType: route.resource,
      resourceId: idFromParams(route, params),
      requestId,
      clientAddress: clientAddressOf(c),
      patch: null,
      rowId: null,
      claimed: false,
      closed: false,
    };
    await runWithAuditEntry(entry, () => next());
    // work the request spawned and that commits later writes nothing under its name
    entry.closed = true;
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
    const status = c.res.status;
    if (entry.tenant === null) return;
    if (entry.rowId === null && (status === 429 || status === 503)) return;
    // the row was written with the answer the route presumed, and the answer is that one
    if (entry.rowId !== null && entry.recordedStatus === status) {
      deps.chainer.soon(entry.tenant);
      return;
    }
    const errorCode = await errorCodeOf(c.res);
    const answered = route.id?.startsWith('answer:') === true && status < 300 ? await answerMember(c.res, route.id.slice('answer:'.length)) : null;
    try {
      if (entry.rowId !== null) {
        await recordAuditOutcome(deps.pool, entry.rowId, status, errorCode, answered);
      } else {
        await insertAuditRow(deps.pool, { ...entry, resourceId: answered ?? entry.resourceId }, status, errorCode);
      }
    } catch (err) {
      // the answer stands (the change, if any, committed with its row); the row's outcome is what is lost
      deps.logger.error({ err, action: entry.action, requestId }, 'audit row not recorded');
      return;
    }
    deps.chainer.soon(entry.tenant);
  };
}

/**
 * Names the tenant and principal of a keyless request once its credential is checked (a hook's
 * signature, a link's): its row joins that tenant's chain. Outside an audited request, nothing.
 */
export function auditAs(tenant: string, principal: string, resourceId?: string): void {
  const e = currentAuditEntry();
  if (e === undefined || e.closed) return;
  e.tenant = tenant;
  e.principal = principal;
  if (resourceId !== undefined) e.resourceId = resourceId;
}

/**
 * Says which status the request answers when the write it makes next creates its resource (a
 * run start's 202): a store write that records the audit row with the creation records that
 * status and the created id, and the answer, when it is that status, writes nothing more.
 */
export function auditPresumeStatus(status: number): void {
  const e = currentAuditEntry();
  if (e !== undefined && !e.closed) e.presumedStatus = status;
}

/** Records the RFC 6902 diff of the change the request makes (a definition's), secrets already redacted. */
export function auditPatch(patch: PatchOp[]): void {
  const e = currentAuditEntry();
  if (e !== undefined && !e.closed) e.patch = patchForStorage(patch, encryptionEnabled());
}
