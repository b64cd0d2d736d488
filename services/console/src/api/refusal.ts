/**
 * One way to say why something was refused: `code: message`, exactly as the API (or the
 * live channel) answered it, so an operator reads the contract's code and can search it.
 */
import { ApiRequestError, LiveRequestError } from '@flowline/client';

/** A refusal as the console shows it. */
export interface Refusal {
  code: string;
  message: string;
  status: number | null;
}

/** Reads any thrown value as a {@link Refusal}. */
export function refusalOf(err: unknown): Refusal {
  if (err instanceof ApiRequestError) return { code: err.code, message: err.message, status: err.status };
  if (err instanceof LiveRequestError) return { code: err.code, message: err.message, status: null };
  if (err instanceof TypeError) return { code: 'NetworkError', message: 'the API did not answer (is it running?)', status: null };
  if (err instanceof Error) return { code: err.name || 'Error', message: err.message, status: null };
  return { code: 'Error', message: String(err), status: null };
}

/** `code: message`. */
export function refusalText(err: unknown): string {
  const r = refusalOf(err);
  return `${r.code}: ${r.message}`;
}

/** True for an answer a retry cannot change (4xx). */
export function isFinalRefusal(err: unknown): boolean {
  return err instanceof ApiRequestError && err.status >= 400 && err.status < 500;
}

/** The messages a refusal's `details` give for one member (`{key, message}` entries whose key is `key`), each once. */
export function refusalMessagesFor(err: unknown, key: string): string[] {
  if (!(err instanceof ApiRequestError) || !Array.isArray(err.details)) return [];
  const messages = (err.details as Array<{ key?: unknown; message?: unknown }>)
    .filter((d) => d?.key === key && typeof d.message === 'string')
    .map((d) => d.message as string);
  return [...new Set(messages)];
}

/** A refusal's `details` as lines, `key: message` (at most 5; entries without a message are left out). */
export function refusalDetailLines(err: unknown): string[] {
  if (!(err instanceof ApiRequestError) || !Array.isArray(err.details)) return [];
  const lines = (err.details as Array<{ key?: unknown; message?: unknown }>)
    .filter((d) => typeof d?.message === 'string')
    .map((d) => (typeof d.key === 'string' && d.key !== '' ? `${d.key}: ${String(d.message)}` : String(d.message)));
  return [...new Set(lines)].slice(0, 5);
}
