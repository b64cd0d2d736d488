/**
 * The JSON codec of libs/db: every json/jsonb value read from Postgres is decoded by
 * {@link decodeJson} (the pool's type parser, `::text` reads, opened envelopes) and every
 * document written is encoded by {@link encodeJson}. Postgres keeps jsonb numbers as
 * `numeric`, exactly; this pair keeps them exact on the JS side (CONTRACT §1.2): a number
 * a double cannot hold reads as a `JsonNumber` and is written back verbatim. Documents
 * without such a number cost native `JSON.parse` / `JSON.stringify` plus a scan of the
 * text (see `parseJson` / `stringifyJson` of @flowline/graph).
 */
import { parseJson, stringifyJson } from '@flowline/graph';

/** A json/jsonb value's text as read from Postgres → its value, numbers exact. */
export function decodeJson(text: string): unknown {
  return parseJson(text);
}

/** The JSON text to store for a document (a `$n::jsonb` parameter), numbers exact. */
export function encodeJson(value: unknown): string {
  return stringifyJson(value);
}
