/**
 * Inbound webhooks (`schema/webhooks.ts`): the tenant's hooks with their secrets sealed at rest
 * (opened only to verify a delivery, never answered), and the delivery log.
 */
import { randomUUID } from 'node:crypto';
import { openJson, sealJson } from '../crypto';
import type { Queryable } from './transaction';

/** A secret as stored: its value only ever leaves the store to verify a delivery. */
export interface WebhookSecret {
  id: string;
  value: string;
  /** ISO time after which it no longer verifies (null: until removed) */
  notAfter: string | null;
}

/** A hook's verification, its secrets aside. */
export interface WebhookAuth {
  type: 'hmac' | 'bearer' | 'none';
  preset?: 'standardWebhooks' | 'github' | 'stripe' | 'slack' | 'custom';
  toleranceSec?: number;
  /** custom preset: the signature header, the HMAC's hash, its encoding and the prefix before it */
  header?: string;
  algorithm?: 'sha256' | 'sha512' | 'sha1';
  encoding?: 'hex' | 'base64';
  prefix?: string;
}

/** A run of the definition (through `alias`, resolved at each delivery; absent: `current`), or an event. */
export type WebhookTarget = { definitionId: string; alias?: string } | { event: string };

export interface WebhookResponse {
  mode: 'async' | 'sync';
  timeoutMs: number;
}

/** A hook as the API answers it (secrets by id and notAfter only). */
export interface WebhookRow {
  id: string;
  tenantId: string;
  slug: string;
  target: WebhookTarget;
  auth: WebhookAuth;
  secrets: Array<{ id: string; notAfter: string | null }>;
  dedupeHeader: string | null;
  maxBodyBytes: number;
  response: WebhookResponse;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A hook as a delivery is verified against it: with its secrets opened. */
export interface WebhookForDelivery extends WebhookRow {
  secretValues: WebhookSecret[];
}

export interface WebhookInput {
  slug: string;
  target: WebhookTarget;
  auth: WebhookAuth;
  secrets: WebhookSecret[];
  dedupeHeader: string | null;
  maxBodyBytes: number;
  response: WebhookResponse;
}

const secretsAt = (id: string) => ({ table: 'webhooks', column: 'secrets', row: id });

interface RawHook {
  id: string;
  tenant_id: string;
  slug: string;
  target: WebhookTarget;
  auth: WebhookAuth;
  secrets: unknown;
  dedupe_header: string | null;
  max_body_bytes: number;
  response: WebhookResponse;
  version: number;
  created_at: Date;
  updated_at: Date;
}

function toRow(r: RawHook): WebhookForDelivery {
  const secretValues = openJson<WebhookSecret[]>(r.secrets, secretsAt(r.id));
  return {
    id: r.id,
    tenantId: r.tenant_id,
    slug: r.slug,
    target: r.target,
    auth: r.auth,
    secrets: secretValues.map((s) => ({ id: s.id, notAfter: s.notAfter })),
    secretValues,
    dedupeHeader: r.dedupe_header,
    maxBodyBytes: r.max_body_bytes,
    response: r.response,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Without the opened secrets: what may leave the API. */
export function publicWebhook(h: WebhookForDelivery): WebhookRow {
  const { secretValues: _secrets, ...rest } = h;
  return rest;
}

/** Inserts a hook; null when the tenant already has that slug. */
export async function insertWebhook(db: Queryable, tenantId: string, input: WebhookInput): Promise<WebhookForDelivery | null> {
  const id = randomUUID();
  const res = await db.query<RawHook>(
    `INSERT INTO webhooks (id, tenant_id, slug, target, auth, secrets, dedupe_header, max_body_bytes, response)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (tenant_id, slug) DO NOTHING
     RETURNING *`,
    [id, tenantId, input.slug, ...jsonParams(id, input), input.dedupeHeader, input.maxBodyBytes, JSON.stringify(input.response)],
  );
  return res.rows[0] ? toRow(res.rows[0]) : null;
}

/** target, auth and the sealed secrets as JSON text ($4–$6): node-postgres would send an array as a Postgres array, not JSON. */
function jsonParams(id: string, input: WebhookInput): [string, string, string] {
  return [JSON.stringify(input.target), JSON.stringify(input.auth), JSON.stringify(sealJson(input.secrets, secretsAt(id)))];
}

/** Replaces a hook's settings (version + 1); null when absent, 'slugTaken' when the new slug is another hook's. */
export async function updateWebhook(db: Queryable, tenantId: string, id: string, input: WebhookInput): Promise<WebhookForDelivery | null | 'slugTaken'> {
  try {
    const res = await db.query<RawHook>(
      `UPDATE webhooks SET slug = $3, target = $4, auth = $5, secrets = $6, dedupe_header = $7, max_body_bytes = $8, response = $9,
         version = version + 1, updated_at = now()
       WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [tenantId, id, input.slug, ...jsonParams(id, input), input.dedupeHeader, input.maxBodyBytes, JSON.stringify(input.response)],
    );
    return res.rows[0] ? toRow(res.rows[0]) : null;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return 'slugTaken';
    throw err;
  }
}

/** One hook of the tenant by id, with its secrets opened (the caller answers only {@link publicWebhook}). */
export async function getWebhook(db: Queryable, tenantId: string, id: string): Promise<WebhookForDelivery | null> {
  const res = await db.query<RawHook>(`SELECT * FROM webhooks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return res.rows[0] ? toRow(res.rows[0]) : null;
}

/** The hook a delivery names. */
export async function webhookBySlug(db: Queryable, tenantId: string, slug: string): Promise<WebhookForDelivery | null> {
  const res = await db.query<RawHook>(`SELECT * FROM webhooks WHERE tenant_id = $1 AND slug = $2`, [tenantId, slug]);
  return res.rows[0] ? toRow(res.rows[0]) : null;
}

/** The tenant's hooks by slug. */
export async function listWebhooks(db: Queryable, tenantId: string): Promise<WebhookRow[]> {
  const res = await db.query<RawHook>(`SELECT * FROM webhooks WHERE tenant_id = $1 ORDER BY slug LIMIT 1000`, [tenantId]);
  return res.rows.map((r) => publicWebhook(toRow(r)));
}

/** Deletes a hook (its delivery log goes with it); false when absent. */
export async function deleteWebhook(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const res = await db.query(
    `WITH gone AS (DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2 RETURNING id)
     , log AS (DELETE FROM webhook_deliveries WHERE webhook_id IN (SELECT id FROM gone))
     SELECT id FROM gone`,
    [tenantId, id],
  );
  return (res.rowCount ?? 0) > 0;
}

export type DeliveryVerdict = 'verified' | 'badSignature' | 'stale' | 'duplicate' | 'tooLarge' | 'noMatch' | 'refused';

export interface DeliveryInput {
  id: string;
  webhookId: string;
  verdict: DeliveryVerdict;
  status: number;
  reason: string | null;
  dedupeKey: string | null;
  contentType: string | null;
  /** the raw body, kept (sealed) only for a delivery whose signature verified */
  body: Buffer | null;
  runId: string | null;
  eventId: string | null;
}

export interface DeliveryRow extends Omit<DeliveryInput, 'body'> {
  receivedAt: Date;
  bodyBytes: number | null;
}

const bodyAt = (id: string) => ({ table: 'webhook_deliveries', column: 'body', row: id });

/** Logs a delivery. */
export async function recordDelivery(db: Queryable, tenantId: string, d: DeliveryInput): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, verdict, status, reason, dedupe_key, content_type, body, run_id, event_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [d.id, tenantId, d.webhookId, d.verdict, d.status, d.reason, d.dedupeKey, d.contentType, d.body === null ? null : JSON.stringify(sealJson({ b64: d.body.toString('base64') }, bodyAt(d.id))), d.runId, d.eventId],
  );
}

interface RawDelivery {
  id: string;
  webhook_id: string;
  verdict: DeliveryVerdict;
  status: number;
  reason: string | null;
  dedupe_key: string | null;
  content_type: string | null;
  body: unknown;
  run_id: string | null;
  event_id: string | null;
  received_at: Date;
}

function bodyOf(r: RawDelivery): Buffer | null {
  return r.body === null ? null : Buffer.from(openJson<{ b64: string }>(r.body, bodyAt(r.id)).b64, 'base64');
}

function toDelivery(r: RawDelivery): DeliveryRow {
  const body = bodyOf(r);
  return {
    id: r.id,
    webhookId: r.webhook_id,
    verdict: r.verdict,
    status: r.status,
    reason: r.reason,
    dedupeKey: r.dedupe_key,
    contentType: r.content_type,
    runId: r.run_id,
    eventId: r.event_id,
    receivedAt: r.received_at,
    bodyBytes: body === null ? null : body.length,
  };
}

/** A hook's deliveries, newest first, at most `limit`. */
export async function listDeliveries(db: Queryable, tenantId: string, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  const res = await db.query<RawDelivery>(
    `SELECT * FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 ORDER BY received_at DESC, id DESC LIMIT $3`,
    [tenantId, webhookId, limit],
  );
  return res.rows.map(toDelivery);
}

/** One delivery with its raw body (null when none was kept). */
export async function getDelivery(db: Queryable, tenantId: string, webhookId: string, id: string): Promise<(DeliveryRow & { body: Buffer | null }) | null> {
  const res = await db.query<RawDelivery>(`SELECT * FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3`, [tenantId, webhookId, id]);
  const r = res.rows[0];
  return r ? { ...toDelivery(r), body: bodyOf(r) } : null;
}
