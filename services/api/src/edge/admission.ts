/**
 * Admission: how much work this API replica takes on at once, decided before a request's body
 * is read, parsed or given a database connection. The token buckets (rate-limit.ts) bound how
 * many requests a tenant makes per second; they cannot stop 200 creates of 1 MiB arriving in
 * the same second, each of which then parses a megabyte and waits for one of a few pooled
 * connections — queued ahead of every other tenant's reads. Admission bounds what is in flight
 * instead, and weighs a write by its body:
 *
 * - per tenant: write requests, write body bytes, and read requests in flight; beyond them
 *   429 `TooManyInFlight` (the tenant itself is busy);
 * - per replica, over every tenant: the same three; beyond them 503 `Overloaded` (this
 *   replica is full; another one, or this one a moment later, serves it).
 *
 * Reads and writes have budgets of their own, so a tenant's burst of writes never takes the
 * slots another tenant's reads need. A write's bytes are its Content-Length; a body sent
 * without one (chunked) is counted as it streams in, and refused at the chunk that crosses a
 * bound. Every refusal carries `Retry-After`. The counters live in this process: they guard
 * this replica's CPU, memory and connection pool, which is why they are per replica.
 */
import type { MiddlewareHandler } from 'hono';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context';
import { ErrorSchema } from '../schemas';
import { OverloadedError, TooManyInFlightError, type RetryLaterError } from '../errors';
import { isStreamedUpload, MAX_BODY_BYTES, UPLOAD_BUFFER_BYTES } from '../body';
import { announcedLength, requestKind, type RequestKind } from './request-weight';

/** The bounds, each 0 = unbounded; the ADMISSION_* options of edge/config.ts. */
export interface AdmissionOptions {
  tenantWrites: number;
  tenantWriteBytes: number;
  tenantReads: number;
  replicaWrites: number;
  replicaWriteBytes: number;
  replicaReads: number;
  /** the `Retry-After` of a refusal, s */
  retryAfterSeconds: number;
}

/** What one tenant, or the whole replica, has in flight. */
export interface Load {
  writes: number;
  writeBytes: number;
  reads: number;
}

/** A bound that refused, by the option that sets it. */
export interface Refusal {
  scope: 'tenant' | 'replica';
  option: string;
  limit: number;
  /** what it counts: `write requests`, `write body bytes`, `read requests` */
  what: string;
}

/** One admitted request's hold on the ledger; released once, when its answer is ready. */
export interface Ticket {
  readonly tenant: string;
  readonly kind: RequestKind;
  bytes: number;
  released: boolean;
}

const empty = (): Load => ({ writes: 0, writeBytes: 0, reads: 0 });

/**
 * The in-flight counters and the admission decision; no IO. A tenant's entry exists only
 * while it has something in flight.
 */
export class AdmissionLedger {
  private readonly replica = empty();
  private readonly tenants = new Map<string, Load>();

  constructor(private readonly opts: AdmissionOptions) {}

  /** What `tenant` (or, without one, the replica) has in flight now. */
  load(tenant?: string): Load {
    return { ...(tenant === undefined ? this.replica : (this.tenants.get(tenant) ?? empty())) };
  }

  /** Admits a request of `bytes` announced body bytes, or names the first bound it would cross (the tenant's before the replica's). */
  admit(tenant: string, kind: RequestKind, bytes: number): Ticket | Refusal {
    const mine = this.tenants.get(tenant) ?? empty();
    const refusal = this.check(mine, kind, 1, bytes);
    if (refusal) return refusal;
    if (!this.tenants.has(tenant)) this.tenants.set(tenant, mine);
    this.add(mine, kind, 1, bytes);
    return { tenant, kind, bytes, released: false };
  }

  /** Counts `bytes` more of an admitted write's streamed body, or names the bound they would cross (nothing counted then). */
  grow(ticket: Ticket, bytes: number): Refusal | null {
    if (ticket.released) return null;
    const mine = this.tenants.get(ticket.tenant)!;
    const refusal = this.check(mine, ticket.kind, 0, bytes);
    if (refusal) return refusal;
    this.add(mine, ticket.kind, 0, bytes);
    ticket.bytes += bytes;
    return null;
  }

  /** Gives back what `ticket` holds; a second call does nothing. */
  release(ticket: Ticket): void {
    if (ticket.released) return;
    ticket.released = true;
    const mine = this.tenants.get(ticket.tenant)!;
    this.add(mine, ticket.kind, -1, -ticket.bytes);
    if (mine.writes === 0 && mine.reads === 0) this.tenants.delete(ticket.tenant);
  }

  private check(mine: Load, kind: RequestKind, requests: number, bytes: number): Refusal | null {
    const o = this.opts;
    const over = (now: number, add: number, limit: number) => limit > 0 && add > 0 && now + add > limit;
    if (kind === 'read') {
      if (over(mine.reads, requests, o.tenantReads)) return { scope: 'tenant', option: 'ADMISSION_TENANT_READS', limit: o.tenantReads, what: 'read requests' };
      if (over(this.replica.reads, requests, o.replicaReads)) return { scope: 'replica', option: 'ADMISSION_REPLICA_READS', limit: o.replicaReads, what: 'read requests' };
      return null;
    }
    if (over(mine.writes, requests, o.tenantWrites)) return { scope: 'tenant', option: 'ADMISSION_TENANT_WRITES', limit: o.tenantWrites, what: 'write requests' };
    if (over(mine.writeBytes, bytes, o.tenantWriteBytes)) return { scope: 'tenant', option: 'ADMISSION_TENANT_WRITE_BYTES', limit: o.tenantWriteBytes, what: 'write body bytes' };
    if (over(this.replica.writes, requests, o.replicaWrites)) return { scope: 'replica', option: 'ADMISSION_REPLICA_WRITES', limit: o.replicaWrites, what: 'write requests' };
    if (over(this.replica.writeBytes, bytes, o.replicaWriteBytes)) return { scope: 'replica', option: 'ADMISSION_REPLICA_WRITE_BYTES', limit: o.replicaWriteBytes, what: 'write body bytes' };
    return null;
  }

  private add(mine: Load, kind: RequestKind, requests: number, bytes: number): void {
    for (const l of [mine, this.replica]) {
      if (kind === 'read') {
        l.reads += requests;
      } else {
        l.writes += requests;
        l.writeBytes += bytes;
      }
    }
  }
}

/** The answer to a refusal: 429 for the tenant's own bound, 503 for the replica's. */
export function refusalError(r: Refusal, retryAfterSeconds: number): RetryLaterError {
  return r.scope === 'tenant'
    ? new TooManyInFlightError(r.what, r.option, r.limit, retryAfterSeconds)
    : new OverloadedError(`every tenant's ${r.what} in flight are at their bound`, r.option, r.limit, retryAfterSeconds);
}

/** `req` with a body that counts each chunk into `ticket` and errors with the refusal at the chunk that crosses a bound. */
function countedBody(req: Request, ledger: AdmissionLedger, ticket: Ticket, retryAfterSeconds: number, onRefused?: (r: Refusal) => void): Request {
  const reader = req.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await reader.read();
      if (r.done) {
        controller.close();
        return;
      }
      const refused = ledger.grow(ticket, r.value.byteLength);
      // the reader (the body limit, the JSON parse) rejects with the refusal; the keep-alive guard drains the rest
      if (refused) {
        onRefused?.(refused);
        controller.error(refusalError(refused, retryAfterSeconds));
      } else {
        controller.enqueue(r.value);
      }
    },
  });
  return new Request(req, { body, duplex: 'half' } as RequestInit);
}

/**
 * The middleware; install on `/v1/*` after authentication (it needs the tenant) and before
 * the body limit and the JSON parse (an unread body costs nothing). `onRefused` sees each
 * refusal (the metrics count them).
 */
export function admission(ledger: AdmissionLedger, opts: AdmissionOptions, onRefused?: (r: Refusal) => void): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const kind = requestKind(c.req.method);
    const raw = c.req.raw;
    // an upload streams to the file store a chunk at a time: it weighs what it holds, not its length
    const upload = isStreamedUpload(c);
    const announced = upload ? UPLOAD_BUFFER_BYTES : kind === 'write' && raw.body !== null ? announcedLength(raw) : 0;
    // over the body limit: refused next, unread, with 413 — nothing to admit
    if (announced !== null && announced > MAX_BODY_BYTES) return next();
    const ticket = ledger.admit(c.get('tenant'), kind, announced ?? 0);
    if (!('released' in ticket)) {
      onRefused?.(ticket);
      throw refusalError(ticket, opts.retryAfterSeconds);
    }
    try {
      if (announced === null) {
        c.req.raw = countedBody(raw, ledger, ticket, opts.retryAfterSeconds, onRefused);
      }
      c.set('releaseAdmission', () => ledger.release(ticket));
      await next();
    } finally {
      ledger.release(ticket);
    }
  };
}

const RETRY_AFTER = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' as const, minimum: 1 } } };
const TOO_MANY_IN_FLIGHT =
  'TooManyInFlight: the tenant already has as many requests (or write body bytes) in flight on this API replica as its ADMISSION_TENANT_* bound allows; retry after `Retry-After` seconds';
const OVERLOADED =
  'Overloaded: this API replica already has as many requests (or write body bytes) in flight as its ADMISSION_REPLICA_* bound allows, or no database connection came free within DATABASE_ACQUIRE_TIMEOUT_MS; retry after `Retry-After` seconds';

/** Adds the admission refusals (429 TooManyInFlight, 503 Overloaded, with `Retry-After`) to every keyed route of the OpenAPI document. */
export function documentAdmission(app: OpenAPIHono<AppEnv>): void {
  for (const def of app.openAPIRegistry.definitions) {
    if (def.type !== 'route' || !def.route.path.startsWith('/v1/')) continue;
    const own = (def.route.responses as Record<string, { description?: string } | undefined>)[429]?.description;
    def.route.responses = {
      ...def.route.responses,
      429: {
        description: own === undefined ? TOO_MANY_IN_FLIGHT : `${own}; or ${TOO_MANY_IN_FLIGHT}`,
        headers: RETRY_AFTER,
        content: { 'application/json': { schema: ErrorSchema } },
      },
      503: { description: OVERLOADED, headers: RETRY_AFTER, content: { 'application/json': { schema: ErrorSchema } } },
    };
  }
}
