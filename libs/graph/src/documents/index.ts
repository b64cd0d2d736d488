/**
 * Node documents (CONTRACT §3): envelopes, branch derivation, input documents,
 * inline outputs and the output size cap.
 */
export { buildEnvelope, checkOutputSize, utf8ByteLength, utf8StringByteLength } from './envelope';
export type { EnvelopeInput } from './envelope';
export { deriveBranch, firedEdgeKeys } from './branch';
export { buildInputDocument, inputDocumentOf } from './input-document';
export {
  MAX_STORED_INTEGER_DIGITS,
  MAX_STORED_SCALE,
  VERBATIM_MARK,
  holdsVerbatimTrigger,
  isVerbatimEnvelope,
  needsVerbatimStorage,
  storableText,
  storedDocumentText,
  unstorableNumber,
  unstorableText,
  unstorableValues,
  verbatimEnvelope,
} from './storable';
export type { UnstorableValue } from './storable';
export {
  endOutput,
  envelopeAsJson,
  inlineOutput,
  inputDocumentAsJson,
  joinOutput,
  passThroughOutput,
  startOutput,
} from './inline-output';
export { toolIdempotencyKey } from './idempotency-key';
