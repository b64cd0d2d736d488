import { z } from 'zod';
import type { CoreOptions } from '@flowline/graph';

const int = () => z.coerce.number().int();
const url = (protocols: RegExp) =>
  z.string().refine((v) => {
    try {
      return protocols.test(new URL(v).protocol);
    } catch {
      return false;
    }
  }, 'must be a URL');

/** Connection options (CONTRACT §7). */
export const connectionOptions = {
  DATABASE_URL: url(/^postgres(ql)?:$/)
    .default('postgres://postgres@127.0.0.1:5432/postgres')
    .describe('Postgres connection string'),
  REDIS_URL: url(/^rediss?:$/)
    .default('redis://127.0.0.1:6379')
    .describe('Redis connection string'),
};

/** Parses `API_KEYS` ("tenantA:keyA,tenantB:keyB") into key → tenant. */
const apiKeys = z
  .string()
  .transform((raw, ctx) => {
    const map: Record<string, string> = {};
    for (const entry of raw
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const at = entry.indexOf(':');
      const tenant = entry.slice(0, at).trim();
      const key = entry.slice(at + 1).trim();
      if (at <= 0 || !tenant || !key) {
        ctx.addIssue({ code: 'custom', message: 'each entry must be tenant:key' });
        return z.NEVER;
      }
      if (map[key] !== undefined) {
        ctx.addIssue({ code: 'custom', message: 'a key maps to one tenant only' });
        return z.NEVER;
      }
      map[key] = tenant;
    }
    return map;
  })
  .optional()
  .describe('tenant:key pairs, comma-separated; unset = single tenant "default" without auth');

/** HTTP options of the API service. */
export const httpOptions = {
  PORT: int().min(0).max(65_535).default(3000).describe('HTTP port of the API'),
  API_KEYS: apiKeys,
  EVENT_REPLAY_LIMIT: int().min(1).max(1000).default(200).describe('events per replay page (ceiling 1000)'),
};

/** Limits the pure core reads (mapped to `CoreOptions` by {@link toCoreOptions}). */
export const coreOptions = {
  MAX_NODES_PER_DEFINITION: int().min(1).default(200).describe('nodes allowed in one graph'),
  MAX_NODE_RUNS_PER_RUN: int()
    .min(1)
    .default(200)
    .describe('node runs of one run (>= MAX_NODES_PER_DEFINITION)'),
  MAX_TOTAL_ATTEMPTS: int().min(1).default(50).describe('attempts all nodes of one run may spend together'),
  DEFAULT_NODE_TIMEOUT_SECONDS: int()
    .min(1)
    .default(600)
    .describe('node deadline when the node sets none, seconds'),
  MAX_OUTPUT_JSON_BYTES: int().min(1).default(262_144).describe('largest output envelope, UTF-8 bytes'),
  MAX_RUN_INPUT_BYTES: int().min(1).default(65_536).describe('largest run input, UTF-8 bytes'),
  MAX_STEERS_PER_NODE: int().min(0).default(5).describe('steering messages accepted per node'),
  CANCEL_DRAIN_GRACE_MS: int()
    .min(100)
    .max(86_400_000)
    .default(10_000)
    .describe('a cancelled run waits this long for each worker to confirm; unconfirmed work is then listed as a survivor'),
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

/** At-rest encryption of graphs and documents. */
export const encryptionOptions = {
  ENCRYPTION_KEY: z
    .string()
    .refine(
      (v) => /^[0-9a-fA-F]{64}$/.test(v) || Buffer.from(v, 'base64').length === 32,
      'must be 32 bytes as 64 hex characters or base64',
    )
    .optional()
    .describe('AES-256-GCM key; when set graphs and documents are stored encrypted (secret)'),
};

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
  ...coreOptions,
  ...dispatchOptions,
  ...workerOptions,
  ...encryptionOptions,
  ...logOptions,
};

/**
 * A service's config schema from option shapes, with the cross-option rules of CONTRACT §7
 * (MAX_NODE_RUNS_PER_RUN >= MAX_NODES_PER_DEFINITION) checked when both options are present.
 */
export function defineConfig<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).superRefine((v: Record<string, unknown>, ctx) => {
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
