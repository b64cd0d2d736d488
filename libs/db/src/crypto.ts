/**
 * At-rest encryption of graphs and documents (CONTRACT §7 `ENCRYPTION_KEY`).
 *
 * A process-wide key, set once at boot by each service from its validated config
 * ({@link configureEncryption}); libs/db never reads the environment. With no key a value
 * is stored as itself, except a document jsonb would rewrite (a number written with an
 * exponent, which `numeric` gives back spelled out in full): that one is stored as its own
 * JSON text in the envelope `{"$json":"v1","text"}` (see `storedDocumentText` of
 * @flowline/graph), and read back through the same open functions as a sealed one.
 *
 * With a key, a value is stored as the envelope `{"$enc":"v1","kid"?,"iv","ct","tag"}` (base64):
 * AES-256-GCM, a random 12-byte IV, the plaintext being the value's JSON text, and the AAD
 * `table.column.row` naming where the value lives. jsonb columns keep the envelope as jsonb
 * (SQL that only copies values keeps working); the text column `messages.text` keeps its
 * JSON text. Reading a plaintext value (written before the key was set) returns it as is
 * (mixed mode). A stored envelope whose tag does not verify — tampered, moved to another
 * row, or another key — or an envelope read without a key is an {@link EncryptedValueError}
 * naming the table, column and row, never the content. Plaintexts are written and read
 * through the codec of json-codec.ts, so numbers stay exact under the seal.
 *
 * Several keys can be configured at once, each by id (a key ring, {@link configureEncryptionKeys}):
 * values are sealed with the current one and name its id in `kid`; any configured key opens the
 * values that name it. An envelope without `kid` was sealed by the single `ENCRYPTION_KEY`, whose
 * id is {@link DEFAULT_KEY_ID}. Rotation = add a key, make it current, let the re-seal
 * (./reseal.ts) move every stored value to it, then drop the old key.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { isVerbatimEnvelope, needsVerbatimStorage, storedDocumentText, verbatimEnvelope } from '@flowline/graph';
import { decodeJson, encodeJson } from './json-codec';

/** Where a value lives: its AAD is `table.column.row` (a composite row joins its parts with `/`). */
export interface Sealed {
  table: string;
  column: string;
  row: string;
}

/** The stored envelope of an encrypted value. */
export interface Envelope {
  $enc: 'v1';
  /** the id of the key that sealed it; absent = {@link DEFAULT_KEY_ID} */
  kid?: string;
  iv: string;
  ct: string;
  tag: string;
}

/** A stored envelope that cannot be opened (tag mismatch, no key, malformed). Keyed; no content. */
export class EncryptedValueError extends Error {
  readonly code = 'EncryptedValueUnreadable';
  readonly details: [{ table: string; column: string; row: string }];
  constructor(where: Sealed, why: string) {
    super(`${where.table}.${where.column} of row ${where.row} cannot be decrypted: ${why}`);
    this.name = 'EncryptedValueError';
    this.details = [{ table: where.table, column: where.column, row: where.row }];
  }
}

/** The id of the single `ENCRYPTION_KEY`, and of every envelope that names no key. */
export const DEFAULT_KEY_ID = 'default';

/** The configured keys by id, and the one that seals new values (null: none, values stay plaintext). */
let ring: ReadonlyMap<string, Buffer> = new Map();
let current: { id: string; key: Buffer } | null = null;
/** equality-digest keys, the current one's first (see {@link digestsOf}) */
let macKeys: Buffer[] = [];

/**
 * Parses an ENCRYPTION_KEY as libs/runtime validates it: 64 hex characters, else base64 of
 * 32 bytes. Throws on anything else.
 */
export function parseEncryptionKey(text: string): Buffer {
  const k = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (k.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64');
  return k;
}

/** Sets (a key, id {@link DEFAULT_KEY_ID}) or clears (undefined/null) the process-wide encryption key. Called at boot. */
export function configureEncryption(text: string | null | undefined): void {
  if (text === undefined || text === null || text === '') configureEncryptionKeys(null);
  else configureEncryptionKeys({ keys: { [DEFAULT_KEY_ID]: text }, current: DEFAULT_KEY_ID });
}

/** A key ring as configured: key text by id, and the id that seals new values. */
export interface KeyRing {
  keys: Readonly<Record<string, string>>;
  current: string;
}

/** Sets (a ring) or clears (null) the process-wide keys. Throws when `current` is not in `keys`. */
export function configureEncryptionKeys(config: KeyRing | null): void {
  if (config === null) {
    ring = new Map();
    current = null;
    macKeys = [];
    return;
  }
  const parsed = new Map(Object.entries(config.keys).map(([id, text]) => [id, parseEncryptionKey(text)] as const));
  const cur = parsed.get(config.current);
  if (cur === undefined) throw new Error(`the current encryption key '${config.current}' is not among the configured keys`);
  ring = parsed;
  current = { id: config.current, key: cur };
  // a separate key for equality digests, derived so a cipher key is never used twice
  macKeys = [cur, ...[...parsed].filter(([id]) => id !== config.current).map(([, k]) => k)].map((k) =>
    createHmac('sha256', k).update('flowline digest v1').digest(),
  );
}

/** The id of the key that seals new values, or null without encryption. */
export function currentKeyId(): string | null {
  return current?.id ?? null;
}

/** The ids of the configured keys. */
export function configuredKeyIds(): string[] {
  return [...ring.keys()];
}

type UnreadableListener = (runId: string, error: EncryptedValueError) => void;
let unreadableListener: UnreadableListener | null = null;

/**
 * Sets the process-wide listener told about a run a dispatcher read left out because a
 * stored value of it cannot be decrypted (each service logs it; the process carries on).
 */
export function onUnreadableRun(listener: UnreadableListener | null): void {
  unreadableListener = listener;
}

/** Tells the process-wide listener (if any) about an unreadable run. */
export function reportUnreadableRun(runId: string, error: EncryptedValueError): void {
  unreadableListener?.(runId, error);
}

/** True when values are sealed on write. */
export function encryptionEnabled(): boolean {
  return current !== null;
}

function aadOf(where: Sealed): Buffer {
  return Buffer.from(`${where.table}.${where.column}.${where.row}`, 'utf8');
}

function encrypt(text: string, where: Sealed): Envelope {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', current!.key, iv);
  cipher.setAAD(aadOf(where));
  const ct = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const sealed = { iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
  // the single key's envelopes name no key, as they always have: readable by an older release
  return current!.id === DEFAULT_KEY_ID ? { $enc: 'v1', ...sealed } : { $enc: 'v1', kid: current!.id, ...sealed };
}

/** The id of the key that sealed `env`. */
export function envelopeKeyId(env: Envelope): string {
  return env.kid ?? DEFAULT_KEY_ID;
}

function decrypt(env: Envelope, where: Sealed): string {
  if (current === null) throw new EncryptedValueError(where, 'ENCRYPTION_KEY is not set');
  const k = ring.get(envelopeKeyId(env));
  if (k === undefined) throw new EncryptedValueError(where, `sealed with key '${envelopeKeyId(env)}', which is not configured`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', k, Buffer.from(env.iv, 'base64'));
    decipher.setAAD(aadOf(where));
    decipher.setAuthTag(Buffer.from(env.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(env.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new EncryptedValueError(where, 'authentication failed (wrong key, or moved from another row)');
  }
}

/**
 * The envelope of `env`'s plaintext sealed again with the current key (for the re-seal), or
 * null when it is already the current key's. Throws {@link EncryptedValueError} like a read.
 */
export function resealEnvelope(env: Envelope, where: Sealed): { envelope: Envelope; plaintext: string } | null {
  if (current === null || envelopeKeyId(env) === current.id) return null;
  const plaintext = decrypt(env, where);
  return { envelope: encrypt(plaintext, where), plaintext };
}

/**
 * A document stored as its JSON text without a key because jsonb would rewrite a number of
 * it (spell `1e131071` out in full): see `storedDocumentText` of @flowline/graph.
 */
export interface Verbatim {
  $json: 'v1';
  text: string;
}

function isSealedEnvelope(v: unknown): v is Envelope {
  return (
    v !== null &&
    typeof v === 'object' &&
    (v as Envelope).$enc === 'v1' &&
    typeof (v as Envelope).iv === 'string' &&
    typeof (v as Envelope).ct === 'string' &&
    typeof (v as Envelope).tag === 'string'
  );
}

/** True when `v` is a sealed envelope (not a verbatim one). */
export function isSealedValue(v: unknown): v is Envelope {
  return isSealedEnvelope(v);
}

/** True when `v` is a stored envelope: sealed (a key), or verbatim (a document jsonb would rewrite). */
export function isEnvelope(v: unknown): v is Envelope | Verbatim {
  return isSealedEnvelope(v) || isVerbatimEnvelope(v);
}

/** The plaintext JSON text of a stored envelope. */
function envelopeText(env: Envelope | Verbatim, where: Sealed): string {
  return isVerbatimEnvelope(env) ? env.text : decrypt(env, where);
}

/**
 * The value to store for `value` (a JSON value): its envelope with a key; without one, its
 * verbatim envelope when jsonb would rewrite it, else `value` itself.
 */
export function sealJson<T>(value: T, where: Sealed): T | Envelope | Verbatim {
  if (value === undefined) return value;
  if (current === null) {
    const text = encodeJson(value);
    return needsVerbatimStorage(text) ? verbatimEnvelope(text) : value;
  }
  return encrypt(encodeJson(value), where);
}

/**
 * JSON text to store for the JSON text `text` (null stays null): the envelope's JSON text
 * with a key, else `text` unchanged. `extra` members (clear structure, e.g. plan_graph's node
 * skeleton) ride beside the envelope.
 */
export function sealJsonText(text: string, where: Sealed, extra?: Record<string, unknown>): string;
export function sealJsonText(text: string | null, where: Sealed, extra?: Record<string, unknown>): string | null;
export function sealJsonText(text: string | null, where: Sealed, extra?: Record<string, unknown>): string | null {
  if (text === null) return text;
  if (current === null) return storedDocumentText(text, extra);
  return JSON.stringify({ ...extra, ...encrypt(text, where) });
}

/** A stored JSON value as read (pg-parsed): the decrypted (or verbatim) value for an envelope, else as is. */
export function openJson<T = unknown>(stored: unknown, where: Sealed): T {
  if (!isEnvelope(stored)) return stored as T;
  return decodeJson(envelopeText(stored, where)) as T;
}

/** The plaintext JSON text of an envelope object (for exact parsing), else null. */
export function openEnvelopeText(stored: unknown, where: Sealed): string | null {
  return isEnvelope(stored) ? envelopeText(stored, where) : null;
}

/**
 * A stored value read as JSON text (`col::text`, or a text column): the decrypted JSON text
 * for an envelope, else the text as is (null stays null).
 */
export function openJsonText(stored: string, where: Sealed): string;
export function openJsonText(stored: string | null, where: Sealed): string | null;
export function openJsonText(stored: string | null, where: Sealed): string | null {
  if (stored === null || stored.charCodeAt(0) !== 0x7b /* { */ || !(stored.includes('"$enc"') || stored.includes('"$json"'))) return stored;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return stored;
  }
  return isEnvelope(parsed) ? envelopeText(parsed, where) : stored;
}

/** A plain string to store in a text column: the envelope's JSON text with a key, else `text`. */
export function sealText(text: string, where: Sealed): string {
  return current === null ? text : JSON.stringify(encrypt(JSON.stringify(text), where));
}

/** A text column as read: the decrypted string for an envelope, else the text as is. */
export function openText(stored: string, where: Sealed): string {
  const t = openJsonText(stored, where);
  return t === stored ? stored : (JSON.parse(t) as string);
}

/**
 * A keyed digest of a JSON text for equality in SQL (a sealed value's ciphertext differs on
 * every write) under the current key; null without a key. Reveals only equality of two values.
 */
export function digestOf(text: string): string | null {
  return digestsOf(text)[0] ?? null;
}

/**
 * The digests of a JSON text under every configured key, the current key's first: a value
 * digested before a rotation still compares equal until the re-seal digests it again.
 */
export function digestsOf(text: string): string[] {
  return macKeys.map((k) => createHmac('sha256', k).update(text, 'utf8').digest('base64'));
}
