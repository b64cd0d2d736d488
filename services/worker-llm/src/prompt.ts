/**
 * Pure prompt composition (CONTRACT §2, §8 steer): named data blocks budgeted in
 * UTF-8 bytes with an explicit truncation marker, input bindings resolved from the
 * input document (a missing path fails ValidationFailed before any inference), and
 * the final `## Operator steering` section of a steered row. A row nobody steered
 * gets no steering section at all.
 */
import { resolvePath, stringifyJson, type InputDocument, type Json, type JsonObject } from '@flowline/graph';
import { llmInvalid } from './errors';

/** Marker line appended when a data block was cut to its byte budget. */
export function truncationMarker(keptBytes: number, totalBytes: number): string {
  return `[truncated: showing the first ${keptBytes} of ${totalBytes} bytes]`;
}

/** Cuts `text` to at most `budget` UTF-8 bytes without splitting a character. */
export function cutToBytes(text: string, budget: number): { text: string; bytes: number; totalBytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= budget) return { text, bytes: buf.length, totalBytes: buf.length };
  let end = Math.max(0, budget);
  // Step back over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), bytes: end, totalBytes: buf.length };
}

/**
 * `## <title>` followed by `value` as JSON (numbers exact) in a fenced block, cut to
 * `budgetBytes` with {@link truncationMarker} after the fence when it did not fit.
 */
export function dataBlock(title: string, value: unknown, budgetBytes: number): string {
  const json = stringifyJson(value ?? null, 2);
  const cut = cutToBytes(json, budgetBytes);
  const marker = cut.bytes < cut.totalBytes ? `\n${truncationMarker(cut.bytes, cut.totalBytes)}` : '';
  return `## ${title}\n\`\`\`json\n${cut.text}\n\`\`\`${marker}`;
}

/**
 * The `## Conversation request` section of an Agent in a Chat graph: the user's message
 * (the run input's `text`, or `message`) cut to `budgetBytes` with the truncation marker, and
 * an `Attachments: a.pdf, b.png` line naming the run's attachments (their content reaches only
 * a node with `includeAttachments`). Without it an Agent after a router — whose upstream is the
 * router's choice, not the message — would never see what the user asked. Empty string when
 * the run input carries neither a message nor attachments.
 */
export function conversationRequestSection(runInput: unknown, budgetBytes: number): string {
  const input = runInput !== null && typeof runInput === 'object' && !Array.isArray(runInput) ? (runInput as Record<string, unknown>) : {};
  const message = typeof input.text === 'string' ? input.text : typeof input.message === 'string' ? input.message : null;
  const names = Array.isArray(input.attachments)
    ? input.attachments.map((a) => (a !== null && typeof a === 'object' ? (a as { name?: unknown }).name : undefined)).filter((n): n is string => typeof n === 'string')
    : [];
  if (message === null && names.length === 0) return '';
  const lines = ['## Conversation request'];
  if (message !== null) {
    const cut = cutToBytes(message, budgetBytes);
    lines.push(cut.text);
    if (cut.bytes < cut.totalBytes) lines.push(truncationMarker(cut.bytes, cut.totalBytes));
  }
  if (names.length > 0) lines.push(`Attachments: ${names.join(', ')}`);
  return lines.join('\n');
}

/** The final steering section: numbered, oldest first; empty string without steering. */
export function steeringSection(steering: readonly string[]): string {
  if (steering.length === 0) return '';
  return `## Operator steering\n${steering.map((m, i) => `${i + 1}. ${m}`).join('\n')}`;
}

/** Joins non-empty prompt parts with a blank line. */
export function joinParts(...parts: (string | null | undefined)[]): string {
  return parts.filter((p): p is string => typeof p === 'string' && p.length > 0).join('\n\n');
}

/**
 * Resolves `inputBindings` (name → dot path) against the input document.
 * @throws LlmError ValidationFailed naming the binding and its path when a path resolves to nothing
 */
export function resolveBindings(bindings: Record<string, string> | null | undefined, input: InputDocument): JsonObject | null {
  if (!bindings || Object.keys(bindings).length === 0) return null;
  const out: JsonObject = {};
  for (const [name, path] of Object.entries(bindings)) {
    const found = resolvePath(input, path);
    if (!found.found || found.value === undefined) {
      throw llmInvalid(`input binding "${name}" (path ${path}) resolves to nothing in the input document`);
    }
    out[name] = found.value as Json;
  }
  return out;
}
