/**
 * The output envelope writer (CONTRACT §3): status, attempt, branch, output, error,
 * and the MAX_OUTPUT_JSON_BYTES cap counted in UTF-8 bytes.
 */
import type { EnvelopeStatus, FailureClass, GraphEdge, Json, OutputEnvelope } from '../model';
import { deriveBranch } from './branch';
import { stringifyJson } from '../conditions/exact-json';
import { storedDocumentText } from './storable';

export interface EnvelopeInput {
  status: EnvelopeStatus;
  attempt: number;
  output: Json;
  /** set when status is `failed` */
  error?: { class: FailureClass; reason: string } | null;
}

/**
 * Compose a node's envelope. `branch` is derived from the node's out-edges (document
 * order) evaluated against the envelope itself; a skipped envelope names no branch.
 */
export function buildEnvelope(outEdges: readonly GraphEdge[], input: EnvelopeInput): OutputEnvelope {
  const envelope: OutputEnvelope = { status: input.status, attempt: input.attempt, branch: null, output: input.output };
  if (input.status === 'failed' && input.error) envelope.error = { class: input.error.class, reason: input.error.reason };
  if (input.status !== 'skipped') envelope.branch = deriveBranch(outEdges, envelope);
  return envelope;
}

/** UTF-8 byte length of a string (astral characters count 4, lone surrogates 3). */
export function utf8StringByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * UTF-8 bytes of `value` as stored (exact numbers verbatim; what the size caps count): its
 * JSON text (`value` itself when a string is given), or the verbatim envelope that text is
 * stored in when it holds a number written with an exponent (see storable.ts).
 */
export function utf8ByteLength(value: Json | OutputEnvelope | string): number {
  const text = typeof value === 'string' ? value : value === undefined ? 'null' : stringifyJson(value);
  return utf8StringByteLength(storedDocumentText(text));
}

/** The OutputTooLarge verdict for an envelope over `maxBytes`, or null when it fits. */
export function checkOutputSize(
  envelope: OutputEnvelope,
  maxBytes: number,
): { class: 'OutputTooLarge'; reason: string } | null {
  const bytes = utf8ByteLength(envelope);
  if (bytes <= maxBytes) return null;
  return { class: 'OutputTooLarge', reason: `output envelope is ${bytes} UTF-8 bytes, over the ${maxBytes}-byte cap` };
}
