/**
 * An Agent's tool results, read for a person. The node output's `steps` list each tool call
 * by its step number but keep no result; the transcript (`GET …/agent-steps`) holds, per tool
 * step, the text the model was shown. These pure readers key the transcript's tool steps by
 * step number (the same numbering as the output's `steps`) and read each result the way the
 * panel reads an output: JSON opened at its first meaningful level, anything else as text.
 */
import { firstMeaningfulLevel } from './node-document';

/** A transcript step as the API answers it (only what the join reads). */
export interface TranscriptStep {
  step: number;
  kind: string;
  payload: Record<string, unknown>;
}

/** One tool call's result as the panel shows it. */
export interface ToolResultRead {
  /** the tool ran and answered (false: it failed, was not offered, or a person rejected it) */
  ok: boolean;
  /** the failure as the worker recorded it */
  error: string | null;
  /** the result when it is not JSON (plain text, or JSON cut short by the 16 KiB cap) */
  text: string | null;
  /** the result's JSON at its first meaningful level, when it parses to an object or array */
  json: unknown;
  /** the members stepped into to reach `json` */
  path: string[];
}

/** The result a tool step's payload holds, or null when the payload is not a tool step's. */
export function toolResultOf(payload: Record<string, unknown>): ToolResultRead | null {
  if (typeof payload.content !== 'string' || typeof payload.ok !== 'boolean') return null;
  const error = typeof payload.error === 'string' ? payload.error : null;
  const parsed = parseStructured(payload.content);
  if (parsed === undefined) return { ok: payload.ok, error, text: payload.content, json: null, path: [] };
  const first = firstMeaningfulLevel(parsed);
  return { ok: payload.ok, error, text: null, json: first.value, path: first.path };
}

/** An object or array `text` parses to, else undefined (scalars read best as the text itself). */
function parseStructured(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Each tool step's result by its step number; other kinds, and tool steps without a result, are left out. */
export function toolResultsByStep(steps: readonly TranscriptStep[]): Map<number, ToolResultRead> {
  const out = new Map<number, ToolResultRead>();
  for (const s of steps) {
    if (s.kind !== 'tool') continue;
    const r = toolResultOf(s.payload);
    if (r) out.set(s.step, r);
  }
  return out;
}
