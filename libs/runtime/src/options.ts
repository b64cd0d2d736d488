import { isIP } from 'node:net';
import { z } from 'zod';
import { parseTenantIntegers, type CoreOptions } from '@flowline/graph';

const int = () => z.coerce.number().int();
const url = (protocols: RegExp) =>
  z.string().refine((v) => {
    try {
      return protocols.test(new URL(v).protocol);
    } catch {
      return false;
    }
  }, 'must be a URL');

/**
 * The hash tag of a key prefix as Redis Cluster reads it: the text between the first `{` and
 * the first `}` after it, when non-empty; `null` when the prefix has none (its keys would then
 * spread over slots, and BullMQ's multi-key scripts fail with CROSSSLOT on a cluster).
 */
export function hashTagOf(prefix: string): string | null {
  const open = prefix.indexOf('{');
  if (open < 0) return null;
  const close = prefix.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return null;
  return prefix.slice(open + 1, close);
}

/** One seed node of a Redis Cluster, as `REDIS_CLUSTER_NODES` lists it. */
export interface RedisClusterSeed {
  host: string;
  port: number;
}

/** `host:port,host:port` → seed nodes; an empty value means "not a cluster". */
const redisClusterNodes = z
  .string()
  .transform((raw, ctx): RedisClusterSeed[] | undefined => {
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    if (entries.length === 0) return undefined;
    const seeds: RedisClusterSeed[] = [];
    for (const [i, entry] of entries.entries()) {
      const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(entry);
      const port = m ? Number(m[2]) : NaN;
      if (!m || port < 1 || port > 65_535) {
        ctx.addIssue({ code: 'custom', message: `entry ${i + 1} must be host:port (port 1–65535)` });
        return z.NEVER;
      }
      seeds.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
    }
    return seeds;
  })
  .optional()
  .describe(
    'Redis Cluster seed nodes, host:port comma-separated; when set every service connects to the cluster (QUEUE_PREFIX must then be a {hash tag}); unset = one Redis at REDIS_URL',
  );

/** Connection options (CONTRACT §7). */
export const connectionOptions = {
  DATABASE_URL: url(/^postgres(ql)?:$/)
    .default('postgres://postgres@127.0.0.1:5432/postgres')
    .describe('Postgres connection string'),
  REDIS_URL: url(/^rediss?:$/)
    .default('redis://127.0.0.1:6379')
    .describe('Redis connection string (with REDIS_CLUSTER_NODES: only its credentials and rediss: TLS are used)'),
  REDIS_CLUSTER_NODES: redisClusterNodes,
  DATABASE_BOOT_WAIT_MS: int()
    .min(0)
    .max(3_600_000)
    .default(60_000)
    .describe('at boot, how long a Postgres that refuses connections or is restarting is retried before the process gives up, ms'),
};

/**
 * The scopes over a key's own tenant (CONTRACT §8: a key without the route's scope → 403):
 * `read` every GET route and the live channel, `run` run starts, chat sends and gate
 * decisions, `operate` the operator verbs and cancel, `define` definition writes, `keys` the
 * tenant's managed API keys (`/v1/api-keys`), `audit` the tenant's audit log. An entry
 * without scopes (or `*`) holds these.
 */
export const TENANT_SCOPES = ['read', 'run', 'operate', 'define', 'keys', 'audit'] as const;

/**
 * Every scope: the {@link TENANT_SCOPES} plus `admin`, the queue UI at `/admin/queues`. It
 * shows every tenant's jobs (the BullMQ lanes are shared), so it is held only when an
 * entry names it — never by a bare entry or `*`.
 */
export const API_KEY_SCOPES = [...TENANT_SCOPES, 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** One `API_KEYS` entry as parsed: the tenant a key names and the scopes it holds. */
export interface ApiKeyGrant {
  tenant: string;
  scopes: readonly ApiKeyScope[];
}

const isScope = (s: string): s is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(s);

/**
 * One entry, `tenant:key` or `tenant:key:scope+scope…` (`*` = every tenant scope, as is an
 * entry without scopes; `admin` only when named). Returns the problem instead when malformed. Messages name the entry by
 * its position only: a key (or a key mistyped into the scope slot) is never echoed.
 */
function parseApiKeyEntry(entry: string, position: number): { key: string; grant: ApiKeyGrant } | string {
  const parts = entry.split(':').map((p) => p.trim());
  const [tenant, key, scopeList] = parts;
  if (parts.length > 3 || !tenant || !key) return `entry ${position} must be tenant:key or tenant:key:scope+scope`;
  if (scopeList === undefined || scopeList === '*') return { key, grant: { tenant, scopes: TENANT_SCOPES } };
  const named = scopeList.split('+').map((s) => s.trim());
  if (!named.every((s) => s === '*' || isScope(s))) {
    return `entry ${position} names an unknown or empty scope (scopes: ${API_KEY_SCOPES.join(', ')}, or * for ${TENANT_SCOPES.join(', ')})`;
  }
  if (named.includes('*')) named.push(...TENANT_SCOPES);
  return { key, grant: { tenant, scopes: API_KEY_SCOPES.filter((s) => named.includes(s)) } };
}

/**
 * Parses `API_KEYS` ("tenantA:keyA,tenantB:keyB:read+run") into key → {tenant, scopes}.
 * An empty key, an unknown scope or a key listed twice is an issue (the process stops at
 * boot, naming API_KEYS and hiding its value).
 */
const apiKeys = z
  .string()
  .transform((raw, ctx) => {
    const map: Record<string, ApiKeyGrant> = {};
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    for (const [i, entry] of entries.entries()) {
      const parsed = parseApiKeyEntry(entry, i + 1);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      if (map[parsed.key] !== undefined) {
        ctx.addIssue({ code: 'custom', message: `entry ${i + 1} repeats a key: a key maps to one tenant only` });
        return z.NEVER;
      }
      map[parsed.key] = parsed.grant;
    }
    return map;
  })
  .optional()
  .describe(
    'bootstrap keys (managed keys live in Postgres: /v1/api-keys): tenant:key or tenant:key:scope+scope entries (scopes read, run, operate, define, keys, audit, admin; none or * = read+run+operate+define+keys+audit, admin only when named, e.g. ops:k1:*+admin), comma-separated; unset = single tenant "default" without auth',
  );

/** HTTP options of the API service. */
export const httpOptions = {
  PORT: int().min(0).max(65_535).default(3000).describe('HTTP port of the API'),
  API_KEYS: apiKeys,
  EVENT_REPLAY_LIMIT: int().min(1).max(1000).default(200).describe('events per replay page (ceiling 1000)'),
};

const splitList = (text: string) => text.split(',').map((e) => e.trim()).filter(Boolean);

/** Whether `text` is an IPv4/IPv6 address or CIDR (`10.0.0.0/8`). */
function isCidr(text: string): boolean {
  const [address = '', bits, extra] = text.split('/');
  const v = isIP(address);
  if (v === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128));
}

/** The TRUSTED_PROXIES entries (validated at boot). */
export const trustedProxiesOf = (c: { TRUSTED_PROXIES: string }): string[] => splitList(c.TRUSTED_PROXIES);

/**
 * Managed API keys (`/v1/api-keys`, stored in Postgres as a keyed hash). The pepper keys that
 * hash: without API_KEY_PEPPER it is derived from ENCRYPTION_KEY, and without either the API
 * refuses to create keys (409 `ManagedKeysDisabled`). Changing the pepper invalidates every
 * managed key.
 */
export const apiKeyOptions = {
  API_KEY_PEPPER: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe('HMAC-SHA256 key of managed API keys\' stored hashes; unset: derived from ENCRYPTION_KEY, else managed keys cannot be created (changing it invalidates every managed key) (secret)'),
  API_KEY_CACHE_TTL_MS: int()
    .min(1_000)
    .max(3_600_000)
    .default(60_000)
    .describe('longest a replica trusts a resolved managed key without asking Postgres, ms (revocations reach every replica at once over Redis; this bounds a lost message)'),
  API_KEY_CACHE_MAX: int().min(1).max(1_000_000).default(10_000).describe('resolved managed keys one replica keeps in memory; the oldest is dropped beyond'),
  API_KEY_LAST_USED_INTERVAL_S: int()
    .min(1)
    .max(86_400)
    .default(60)
    .describe("how often at most a managed key's last use (time and client address) is written, s"),
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      for (const entry of splitList(text)) if (!isCidr(entry)) ctx.addIssue({ code: 'custom', message: `'${entry}' is not a CIDR (10.0.0.0/8, fd00::/8) or an address` });
    })
    .describe(
      "comma-separated networks of the reverse proxies in front of the API: from a peer inside them the client address (a managed key's cidrs, its last use) is read from X-Forwarded-For, the nearest entry outside them; empty = the TCP peer is the client",
    ),
  API_KEY_MAX_ROTATION_GRACE_S: int()
    .min(0)
    .max(90 * 86_400)
    .default(604_800)
    .describe('the longest grace a rotation (POST /v1/api-keys/{id}/rotate) may give the old secret, s'),
};

/** Bounds of one template render (prompts, instructions, Tool arguments, End outputTemplate). */
export const templateOptions = {
  MAX_TEMPLATE_OUTPUT_BYTES: int()
    .min(1024)
    .max(16_777_216)
    .default(262_144)
    .describe('most UTF-8 bytes one rendered template value may hold; a render past it fails the node ValidationFailed'),
  TEMPLATE_RENDER_LIMIT_MS: int()
    .min(10)
    .max(60_000)
    .default(500)
    .describe('wall-clock backstop of one template render, ms; a render past it fails the node ValidationFailed'),
};

/** Limits the pure core reads (mapped to `CoreOptions` by {@link toCoreOptions}). */
export const coreOptions = {
  MAX_NODES_PER_DEFINITION: int().min(1).default(200).describe('nodes allowed in one graph'),
  MAX_NODE_RUNS_PER_RUN: int()
    .min(1)
    .default(200)
    .describe('node runs of one run (>= MAX_NODES_PER_DEFINITION)'),
  // Retries only: each node's first attempt is free, so the largest graph MAX_NODES_PER_DEFINITION
  // admits can always finish when nothing fails; the budget bounds what failures may cost.
  MAX_TOTAL_ATTEMPTS: int()
    .min(0)
    .default(50)
    .describe("retries all nodes of one run may spend together (attempts beyond each node's first; 0 = no retries)"),
  DEFAULT_NODE_TIMEOUT_SECONDS: int()
    .min(1)
    .default(600)
    .describe('node deadline when the node sets none, seconds'),
  MAX_OUTPUT_JSON_BYTES: int().min(1).default(262_144).describe('largest output envelope, UTF-8 bytes'),
  MAX_RUN_INPUT_BYTES: int().min(1).default(65_536).describe('largest run input, UTF-8 bytes'),
  MAX_RUN_STATE_BYTES: int().min(1).default(262_144).describe('largest run state, UTF-8 bytes; a write past it fails its node ValidationFailed'),
  MAP_MAX_CONCURRENCY: int().min(1).max(1000).default(64).describe("most child runs one Map node keeps working at once (caps its config.maxConcurrency)"),
  MAP_MAX_ITEMS: int().min(1).max(1_000_000).default(10_000).describe('most items one Map node runs; a longer items array fails the node ValidationFailed'),
  MAX_STEERS_PER_NODE: int().min(0).default(5).describe('steering messages accepted per node'),
  MAX_RUN_METADATA_KEYS: int().min(0).max(256).default(16).describe('most metadata keys on one run (keys: 1–64 letters, digits, _ - .)'),
  MAX_RUN_METADATA_VALUE_CHARS: int().min(1).max(4096).default(256).describe('longest run metadata value, characters'),
  MAX_BULK_RUNS: int().min(1).max(10_000_000).default(100_000).describe('most runs one bulk action (POST /v1/runs/bulk) may apply to; a filter matching more is refused'),
  CANCEL_DRAIN_GRACE_MS: int()
    .min(100)
    .max(86_400_000)
    .default(10_000)
    .describe('a cancelled run waits this long for each worker to confirm; unconfirmed work is then listed as a survivor'),
  ...templateOptions,
};

/** Dispatcher options. */
export const dispatchOptions = {
  DISPATCH_SWEEP_MS: int().min(100).default(500).describe('due-run sweep interval, ms (floor 100)'),
  MAX_CONCURRENT_RUNS: int().min(1).default(100).describe('live runs per tenant; parked runs hold no slot'),
  SHARD_COUNT: int()
    .min(1)
    .max(4096)
    .default(64)
    .describe('run shards leased among dispatchers (fixed per cluster)'),
};

/** Largest MAX_PENDING_RUNS (and per-tenant override). */
export const MAX_PENDING_RUNS_CEILING = 10_000_000;

/** Backlog bounds of a tenant's runs never admitted yet. */
export const backlogOptions = {
  MAX_PENDING_RUNS: int()
    .min(0)
    .max(MAX_PENDING_RUNS_CEILING)
    .default(10_000)
    .describe("Pending top-level runs a tenant may have; a start past it answers 429 BacklogFull with Retry-After (0 = unbounded)"),
  TENANT_MAX_PENDING_RUNS: z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      try {
        parseTenantIntegers(text, 0, MAX_PENDING_RUNS_CEILING);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe('per-tenant MAX_PENDING_RUNS as tenant=limit pairs (a=50,b=0); an unlisted tenant has MAX_PENDING_RUNS'),
  BACKLOG_RETRY_AFTER_S: int().min(1).max(3_600).default(5).describe('Retry-After of a 429 BacklogFull answer, s'),
  PENDING_RUN_TTL_MS: int()
    .min(0)
    .max(30 * 86_400_000)
    .default(0)
    .describe('a top-level run still Pending, never admitted, this long after its creation ends Failed/Expired (0 = never)'),
};

/** MAX_PENDING_RUNS per tenant: its TENANT_MAX_PENDING_RUNS entry, else MAX_PENDING_RUNS (options validated at boot). */
export function maxPendingRunsOf(c: { MAX_PENDING_RUNS: number; TENANT_MAX_PENDING_RUNS: string }): (tenantId: string) => number {
  const overrides = parseTenantIntegers(c.TENANT_MAX_PENDING_RUNS, 0, MAX_PENDING_RUNS_CEILING);
  return (tenantId) => overrides[tenantId] ?? c.MAX_PENDING_RUNS;
}

/** Worker options. */
export const workerOptions = {
  LANE_CONCURRENCY: int().min(1).max(1000).default(8).describe('jobs one worker process runs at once'),
  LLM_BASE_URL: url(/^https?:$/)
    .optional()
    .describe('OpenAI-compatible endpoint of the LLM lane'),
  LLM_API_KEY: z.string().optional().describe('API key of the LLM endpoint (secret)'),
  LLM_MODEL: z.string().optional().describe('default model of the LLM lane'),
  TOOL_FILES_ROOT: z.string().optional().describe('root folder the file tools may read'),
  TOOL_MODULES: z.string().optional().describe('comma-separated extra tool modules to load'),
  WORKER_LOCK_MS: int()
    .min(200)
    .default(10_000)
    .describe(
      'BullMQ job lock, ms: renewed while a call runs; a worker that died is noticed within about this long and its node retried as Interrupted',
    ),
};

/**
 * MCP servers (the API lists their tools at a run start, the workers call them). Stdio
 * servers come only from MCP_STDIO_SERVERS_FILE, never from the API.
 */
export const mcpOptions = {
  MCP_STDIO_SERVERS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'JSON file of the deployment\'s stdio MCP servers, { "servers": { "<name>": { command, args?, env?, cwd?, allowedTools?, timeoutMs? } } }; the workers start them, every tenant may name them',
    ),
  MCP_ALLOWED_HOSTS: z
    .string()
    .optional()
    .describe('comma-separated host names or IP literals whose private, loopback or link-local addresses MCP server URLs may reach (all others are refused)'),
  MCP_MAX_CONNECTIONS: int().min(1).max(10_000).default(64).describe('open MCP sessions a process keeps; the least recently used idle one is closed beyond'),
  MCP_CONNECT_TIMEOUT_MS: int().min(100).max(600_000).default(10_000).describe('how long opening an MCP session (initialize) may take, ms'),
};

const isEncryptionKeyText = (v: string) => /^[0-9a-fA-F]{64}$/.test(v) || Buffer.from(v, 'base64').length === 32;
const ENCRYPTION_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Parses `ENCRYPTION_KEYS` ("k1:<key>,k2:<key>") into id → key text. A malformed id or key, or
 * an id listed twice, is an issue naming the entry by its position (never echoing a key).
 */
const encryptionKeys = z
  .string()
  .transform((raw, ctx) => {
    const out: Record<string, string> = {};
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    for (const [i, entry] of entries.entries()) {
      const at = entry.indexOf(':');
      const id = at < 0 ? '' : entry.slice(0, at).trim();
      const key = at < 0 ? '' : entry.slice(at + 1).trim();
      const problem = !ENCRYPTION_KEY_ID.test(id)
        ? `entry ${i + 1} must be id:key with an id of 1-32 letters, digits, _ or -`
        : !isEncryptionKeyText(key)
          ? `entry ${i + 1}'s key must be 32 bytes as 64 hex characters or base64`
          : out[id] !== undefined
            ? `entry ${i + 1} repeats the id '${id}'`
            : null;
      if (problem !== null) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      out[id] = key;
    }
    return out;
  })
  .optional()
  .describe(
    "at-rest keys by id for rotation, id:key comma-separated (each 32 bytes as 64 hex characters or base64); values sealed with a key name its id; ENCRYPTION_KEY, when also set, is the key 'default' (secret)",
  );

/** At-rest encryption of graphs and documents. */
export const encryptionOptions = {
  ENCRYPTION_KEY: z
    .string()
    .refine(isEncryptionKeyText, 'must be 32 bytes as 64 hex characters or base64')
    .optional()
    .describe("AES-256-GCM key; when set graphs and documents are stored encrypted; its id is 'default' (secret)"),
  ENCRYPTION_KEYS: encryptionKeys,
  ENCRYPTION_KEY_CURRENT: z
    .string()
    .regex(ENCRYPTION_KEY_ID, 'must be a key id of ENCRYPTION_KEYS')
    .optional()
    .describe("the id of the key that seals new values (required with ENCRYPTION_KEYS unless it holds one key; default: 'default' with ENCRYPTION_KEY alone)"),
};

/** The audit log (services/api audit/): how long rows are kept and when a row is chained. */
export const auditOptions = {
  AUDIT_RETENTION_DAYS: int()
    .min(0)
    .max(36_500)
    .default(365)
    .describe("days a tenant's audit rows are kept before the prune deletes them (a checkpoint of the last pruned row keeps GET /v1/audit/verify working); 0 keeps them forever"),
  AUDIT_CHAIN_GRACE_S: int()
    .min(1)
    .max(86_400)
    .default(60)
    .describe('seconds after which a committed audit row whose answer was never recorded (its process ended mid-request) is chained anyway, with no status'),
  AUDIT_SWEEP_MS: int()
    .min(100)
    .max(3_600_000)
    .default(5_000)
    .describe('time between two audit sweeps, ms: each chains the rows a request did not chain right after its commit, and prunes by AUDIT_RETENTION_DAYS'),
  AUDIT_CHAIN_DELAY_MS: int()
    .min(0)
    .max(60_000)
    .default(50)
    .describe("how long after a request's audit row is recorded its tenant's chain pass starts, ms; the requests within it share one pass"),
};

/** The re-seal of stored values with the current key (the dispatcher runs it). */
export const resealOptions = {
  ENCRYPTION_RESEAL_INTERVAL_MS: int()
    .min(0)
    .max(86_400_000)
    .default(60_000)
    .describe('how often a dispatcher looks for values sealed with an older key and re-seals them, ms (0 = never); idle once no older key is in use'),
  ENCRYPTION_RESEAL_BATCH: int().min(1).max(10_000).default(500).describe('values re-sealed per statement'),
};

/** The key ring the encryption options describe (null: no encryption). Assumes {@link encryptionRingIssue} found none. */
export function encryptionKeyRing(o: { ENCRYPTION_KEY?: string | undefined; ENCRYPTION_KEYS?: Record<string, string> | undefined; ENCRYPTION_KEY_CURRENT?: string | undefined }): { keys: Record<string, string>; current: string } | null {
  const keys: Record<string, string> = { ...(o.ENCRYPTION_KEY ? { default: o.ENCRYPTION_KEY } : {}), ...(o.ENCRYPTION_KEYS ?? {}) };
  const ids = Object.keys(keys);
  if (ids.length === 0) return null;
  const current = o.ENCRYPTION_KEY_CURRENT ?? (ids.length === 1 ? ids[0]! : 'default');
  return { keys, current };
}

/** Why the encryption options do not make a key ring, or null when they do (or there is none). */
function encryptionRingIssue(v: Record<string, unknown>): { path: string; message: string } | null {
  const keys = v.ENCRYPTION_KEYS as Record<string, string> | undefined;
  if (typeof v.ENCRYPTION_KEY === 'string' && keys?.default !== undefined) {
    return { path: 'ENCRYPTION_KEYS', message: "names the id 'default', which is ENCRYPTION_KEY's: list the key once" };
  }
  const ids = [...(typeof v.ENCRYPTION_KEY === 'string' ? ['default'] : []), ...Object.keys(keys ?? {})];
  const current = v.ENCRYPTION_KEY_CURRENT as string | undefined;
  if (current !== undefined && !ids.includes(current)) {
    return { path: 'ENCRYPTION_KEY_CURRENT', message: ids.length === 0 ? 'is set without ENCRYPTION_KEYS or ENCRYPTION_KEY' : `must be one of the configured key ids (${ids.join(', ')})` };
  }
  if (current === undefined && ids.length > 1 && !ids.includes('default')) {
    return { path: 'ENCRYPTION_KEY_CURRENT', message: `is required when several keys are configured (${ids.join(', ')})` };
  }
  return null;
}

/** Logging. */
export const logOptions = {
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level'),
};

/** Every CONTRACT §7 option. */
export const allOptions = {
  ...connectionOptions,
  ...httpOptions,
  ...apiKeyOptions,
  ...coreOptions,
  ...dispatchOptions,
  ...backlogOptions,
  ...workerOptions,
  ...mcpOptions,
  ...encryptionOptions,
  ...auditOptions,
  ...logOptions,
};

/**
 * A service's config schema from option shapes, with the cross-option rules checked when both
 * options are present: MAX_NODE_RUNS_PER_RUN >= MAX_NODES_PER_DEFINITION (CONTRACT §7), and a
 * hash-tagged QUEUE_PREFIX when REDIS_CLUSTER_NODES is set.
 */
export function defineConfig<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).superRefine((v: Record<string, unknown>, ctx) => {
    const ring = encryptionRingIssue(v);
    if (ring !== null) ctx.addIssue({ code: 'custom', path: [ring.path], message: ring.message });
    // On a cluster every key and channel must share the prefix's slot (BullMQ's scripts and ours are multi-key).
    if (v.REDIS_CLUSTER_NODES !== undefined && typeof v.QUEUE_PREFIX === 'string' && hashTagOf(v.QUEUE_PREFIX) === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['QUEUE_PREFIX'],
        message: 'must contain a non-empty {hash tag} (e.g. {flowline}) when REDIS_CLUSTER_NODES is set',
      });
    }
    const nodes = v.MAX_NODES_PER_DEFINITION;
    const runs = v.MAX_NODE_RUNS_PER_RUN;
    if (typeof nodes === 'number' && typeof runs === 'number' && runs < nodes) {
      ctx.addIssue({
        code: 'custom',
        path: ['MAX_NODE_RUNS_PER_RUN'],
        message: `must be >= MAX_NODES_PER_DEFINITION (${nodes})`,
      });
    }
  });
}

type CoreConfig = { [K in keyof typeof coreOptions]: number };

/** Maps validated core options to libs/graph `CoreOptions`. */
export function toCoreOptions(cfg: CoreConfig): CoreOptions {
  return {
    maxNodesPerDefinition: cfg.MAX_NODES_PER_DEFINITION,
    maxNodeRunsPerRun: cfg.MAX_NODE_RUNS_PER_RUN,
    maxTotalAttempts: cfg.MAX_TOTAL_ATTEMPTS,
    defaultNodeTimeoutSeconds: cfg.DEFAULT_NODE_TIMEOUT_SECONDS,
    maxOutputJsonBytes: cfg.MAX_OUTPUT_JSON_BYTES,
    maxRunInputBytes: cfg.MAX_RUN_INPUT_BYTES,
    maxSteersPerNode: cfg.MAX_STEERS_PER_NODE,
    cancelDrainGraceMs: cfg.CANCEL_DRAIN_GRACE_MS,
    maxTemplateOutputBytes: cfg.MAX_TEMPLATE_OUTPUT_BYTES,
    templateRenderLimitMs: cfg.TEMPLATE_RENDER_LIMIT_MS,
    maxRunStateBytes: cfg.MAX_RUN_STATE_BYTES,
    mapMaxConcurrency: cfg.MAP_MAX_CONCURRENCY,
    mapMaxItems: cfg.MAP_MAX_ITEMS,
  };
}

/** `name — description (default …)` for every option of a shape: the generated option docs. */
export function describeOptions(shape: z.ZodRawShape): string[] {
  return Object.entries(shape).map(([name, schema]) => {
    const s = schema as z.ZodType;
    const parsed = s.safeParse(undefined);
    const dflt =
      parsed.success && parsed.data !== undefined ? ` (default ${JSON.stringify(parsed.data)})` : '';
    return `${name} — ${s.description ?? ''}${dflt}`;
  });
}
