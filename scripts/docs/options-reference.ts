/**
 * docs/reference/options.md: every environment option of every service, with its default,
 * allowed values and meaning, read from the zod config schemas each service's `main.ts`
 * loads. A new option appears here when `npm run docs:gen` runs; an option without a
 * description stops the generator (describe it in the schema, one line).
 */
import { z } from 'zod';
import { apiConfigSchema } from '../../services/api/src/config';
import { edgeConfigSchema } from '../../services/api/src/edge/config';
import { liveConfigSchema } from '../../services/api/src/live/config';
import { dispatcherConfigSchema } from '../../services/dispatcher/src/config';
import { llmWorkerConfigSchema } from '../../services/worker-llm/src/config';
import { toolWorkerConfigSchema } from '../../services/worker-tool/src/config';
import { code, generatedBanner, page, table } from './markdown';

/** One service: the schemas its `main.ts` passes to `loadConfig`, by their exported names. */
export interface ServiceOptions {
  service: string;
  title: string;
  what: string;
  schemas: Record<string, z.ZodType>;
}

export const SERVICE_OPTIONS: readonly ServiceOptions[] = [
  {
    service: 'api',
    title: 'API',
    what: 'REST routes, the live channel (Socket.IO and SSE) and the console; stateless, run as many replicas as you need.',
    schemas: { apiConfigSchema, liveConfigSchema, edgeConfigSchema },
  },
  {
    service: 'dispatcher',
    title: 'Dispatcher',
    what: 'Leases run shards, plans every tick and commits it; replicas share the shards.',
    schemas: { dispatcherConfigSchema },
  },
  {
    service: 'worker-llm',
    title: 'LLM worker',
    what: 'Runs LlmCall, Agent and DecisionModel jobs against an OpenAI-compatible provider.',
    schemas: { llmWorkerConfigSchema },
  },
  {
    service: 'worker-tool',
    title: 'Tool worker',
    what: 'Runs Tool jobs (built-in tools and `TOOL_MODULES`).',
    schemas: { toolWorkerConfigSchema },
  },
];

interface JsonSchemaProp {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
}

function properties(schema: z.ZodType): Record<string, JsonSchemaProp> {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, JsonSchemaProp> };
  return js.properties ?? {};
}

function allowedOf(p: JsonSchemaProp): string {
  if (p.enum) return p.enum.map((v) => code(String(v))).join(', ');
  const parts: string[] = [];
  if (p.type === 'integer' || p.type === 'number') {
    const max = p.maximum !== undefined && p.maximum < Number.MAX_SAFE_INTEGER ? p.maximum : undefined;
    const min = p.minimum ?? (p.exclusiveMinimum !== undefined ? `> ${p.exclusiveMinimum}` : undefined);
    const noun = p.type === 'integer' ? 'integer' : 'number';
    if (typeof min === 'number' && max !== undefined) parts.push(`${noun} ${min}–${max}`);
    else if (typeof min === 'number') parts.push(`${noun} ≥ ${min}`);
    else if (typeof min === 'string') parts.push(`${noun} ${min}`);
    else parts.push(noun);
  } else if (p.type === 'string') {
    parts.push(p.minLength ? 'non-empty string' : 'string');
  }
  return parts.join(', ');
}

/** A default that differs between two evaluations (a fresh id, the host name) is computed at start. */
function defaultOf(first: JsonSchemaProp, second: JsonSchemaProp | undefined): string {
  if (first.default === undefined) return 'unset';
  if (JSON.stringify(first.default) !== JSON.stringify(second?.default)) return 'computed at start';
  return code(String(first.default));
}

function serviceSection(s: ServiceOptions): string {
  const rows: string[][] = [];
  const seen = new Set<string>();
  for (const [schemaName, schema] of Object.entries(s.schemas)) {
    const first = properties(schema);
    const second = properties(schema);
    for (const [name, p] of Object.entries(first)) {
      if (seen.has(name)) continue;
      seen.add(name);
      if (!p.description) {
        throw new Error(`options reference: ${name} of ${schemaName} (services/${s.service}) has no description; add .describe('…') to it in the schema`);
      }
      rows.push([code(name), defaultOf(p, second[name]), allowedOf(p), p.description]);
    }
  }
  rows.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  return page([
    `## ${s.title}`,
    `\`services/${s.service}\` — ${s.what} Schemas: ${Object.keys(s.schemas).map(code).join(', ')}.`,
    table(['option', 'default', 'allowed', 'meaning'], rows),
  ]).trimEnd();
}

/** Which services read each option. */
function sharedIndex(): string {
  const readers = new Map<string, string[]>();
  for (const s of SERVICE_OPTIONS) {
    for (const schema of Object.values(s.schemas)) {
      for (const name of Object.keys(properties(schema))) {
        const list = readers.get(name) ?? [];
        if (!list.includes(s.service)) list.push(s.service);
        readers.set(name, list);
      }
    }
  }
  const rows = [...readers.entries()]
    .filter(([, list]) => list.length > 1)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, list]) => [code(name), list.join(', ')]);
  return page([
    '## Options several services read',
    'Give these the same value on every process that reads them (`ENCRYPTION_KEY`, `QUEUE_PREFIX` and `SHARD_COUNT` above all: a mismatch splits the cluster).',
    table(['option', 'read by'], rows),
  ]).trimEnd();
}

/** The whole page. */
export function renderOptionsReference(): string {
  return page([
    generatedBanner('the zod config schemas of each service (`services/*/src/config.ts`, `services/api/src/live/config.ts`, `services/api/src/edge/config.ts`, `libs/runtime/src/options.ts`)'),
    '# Options reference',
    'Every process reads its options from environment variables, once, at start. An invalid value stops the process before it ' +
      'does anything, with a message naming the option (never echoing a secret). Durations carry their unit in the name ' +
      '(`_MS`, `_SECONDS`); sizes are bytes. Secrets: `API_KEYS`, `ENCRYPTION_KEY`, `LLM_API_KEY`, `LLM_PROVIDERS`.',
    '- ' + SERVICE_OPTIONS.map((s) => `[${s.title}](#${s.title.toLowerCase().replace(/\s+/g, '-')})`).join(' · ') +
      ' · [Options several services read](#options-several-services-read)',
    ...SERVICE_OPTIONS.map(serviceSection),
    sharedIndex(),
  ]);
}
