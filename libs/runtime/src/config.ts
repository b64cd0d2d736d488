import type { z } from 'zod';
import { redactUrlUserinfo } from './redact';

/** The outcome of {@link parseConfig}: the typed value, or every problem named by option. */
export type ConfigResult<T> = { ok: true; value: T } | { ok: false; issues: string[] };

/** Thrown by {@link parseConfigOrThrow}: carries every issue, each naming its option. */
export class ConfigError extends Error {
  readonly code = 'ConfigInvalid';
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * An invalid option's value as a message may echo it: a URL option (DATABASE_URL, REDIS_URL,
 * LLM_BASE_URL…) without its userinfo — and without anything but its scheme when it does not
 * parse, as a password may then sit anywhere in it — any other value with URL userinfo redacted.
 */
function shownValue(option: string, given: string): string {
  if (!/URL$/.test(option)) return redactUrlUserinfo(given);
  if (!URL.canParse(given)) return `${/^[a-z][a-z0-9+.-]*:/i.exec(given)?.[0] ?? ''}[unparseable URL hidden]`;
  const u = new URL(given);
  if (u.username || u.password) {
    u.username = 'REDACTED';
    u.password = '';
  }
  return u.toString();
}

/**
 * Validates `env` against `schema` (keys are option names, e.g. `DISPATCH_SWEEP_MS`).
 * Empty strings count as unset, so defaults apply. Never exits, never logs.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Env): ConfigResult<z.output<S>> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v.trim() !== '') cleaned[k] = v.trim();
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map((i) => {
    const name = i.path.length ? i.path.map(String).join('.') : '(config)';
    const given = typeof i.path[0] === 'string' ? cleaned[i.path[0]] : undefined;
    const option = typeof i.path[0] === 'string' ? i.path[0] : '';
    const secret = /KEY|SECRET|PASSWORD|TOKEN/.test(option);
    const shown = given === undefined ? '' : secret ? ' (value hidden)' : ` (got ${JSON.stringify(shownValue(option, given))})`;
    return `${name}: ${i.message}${shown}`;
  });
  return { ok: false, issues };
}

/** What {@link loadConfig} does on invalid options; replaceable in tests. */
export interface LoadConfigIo {
  print(line: string): void;
  exit(code: number): never;
}

const processIo: LoadConfigIo = {
  print: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => process.exit(code),
};

/**
 * Parses a service's configuration once at boot. On invalid options prints every issue,
 * each naming its option, and exits the process with status 1.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Env = process.env,
  io: LoadConfigIo = processIo,
): z.output<S> {
  const result = parseConfig(schema, env);
  if (result.ok) return result.value;
  io.print('invalid configuration:');
  for (const issue of result.issues) io.print(`  ${issue}`);
  return io.exit(1);
}

/** {@link parseConfig} for callers that prefer an exception (tests, tools). */
export function parseConfigOrThrow<S extends z.ZodType>(schema: S, env: Env): z.output<S> {
  const result = parseConfig(schema, env);
  if (!result.ok) throw new ConfigError(result.issues);
  return result.value;
}
