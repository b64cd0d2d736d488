/** Reading command-line values: JSON inline or from `@file`, graph files, positive integers. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './errors';

async function readText(path: string, cwd: string | undefined, what: string): Promise<string> {
  try {
    return await readFile(resolve(cwd ?? '.', path), 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${(err as Error).message}`, { cause: err });
  }
}

/** A JSON file's value (a graph document, say). */
export async function readJsonFile(path: string, cwd: string | undefined, what = 'file'): Promise<unknown> {
  return parseJson(await readText(path, cwd, what), `${what} ${path}`);
}

/**
 * A graph document from a file: the document itself, or a wrapper holding it in `graph`
 * and having no `nodes` of its own — a definition as `--json definitions get` prints it,
 * or a sample of scripts/samples.
 */
export async function readGraphFile(path: string, cwd: string | undefined): Promise<unknown> {
  const value = await readJsonFile(path, cwd, 'graph');
  if (value && typeof value === 'object' && !('nodes' in value) && 'graph' in value && value.graph && typeof value.graph === 'object') return value.graph;
  return value;
}

/** `--input`-style value: inline JSON, or `@path` to read it from a file. */
export async function jsonArgument(value: string, cwd: string | undefined, option: string): Promise<unknown> {
  if (value.startsWith('@')) return readJsonFile(value.slice(1), cwd, `${option} file`);
  return parseJson(value, option);
}

/** commander parser for a positive integer option (refused at parse time: exit 2). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** commander parser for a non-negative integer option. */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

/** commander parser for `--priority`: an integer 1–5 (higher first; the API refuses anything else too). */
export function runPriority(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 5) throw new InvalidArgumentError('expected an integer 1–5 (5 is the most urgent)');
  return n;
}
