/**
 * The queue's JSON codec: how a job payload (work item) and a job return value (work
 * return) cross Redis with their numbers exact (CONTRACT §1.2).
 *
 * BullMQ writes job data and return values with `JSON.stringify` and reads them back with
 * `JSON.parse`, which would round a number a double cannot hold (a `JsonNumber` of
 * @flowline/graph) to its nearest double. So a value holding one travels as its ids plus
 * its exact JSON text, `{ runId, nodeKey, invocationId, exactJson }`; every other value
 * travels as it is. The common case costs one walk of the value on the writing side and a
 * member check on the reading side; only the rare value with exact numbers pays for the
 * text (written by `stringifyJson`, read by `parseJson`). The ids stay readable in both
 * forms, for a reader that only needs to know whose job it is.
 */
import { hasExactNumbers, parseJson, stringifyJson } from '@flowline/graph';

/** The ids every work item and work return carries. */
export interface WorkIds {
  runId: string;
  nodeKey: string;
  invocationId: string;
}

/** A value with exact numbers, as it crosses Redis. */
export interface ExactWire extends WorkIds {
  /** the value's JSON text, exact numbers verbatim */
  exactJson: string;
}

/** A work item or work return as it crosses Redis: itself, or its {@link ExactWire} form. */
export type Wire<T extends WorkIds> = T | ExactWire;

/** The form of `value` to hand BullMQ (as job data or as a job's return value). */
export function toWire<T extends WorkIds>(value: T): Wire<T> {
  if (!hasExactNumbers(value)) return value;
  return { runId: value.runId, nodeKey: value.nodeKey, invocationId: value.invocationId, exactJson: stringifyJson(value) };
}

/**
 * The value a wire form stands for (unvalidated: the caller parses it with its schema).
 * Anything that is not an {@link ExactWire} is returned as it is; an `exactJson` that is not
 * JSON reads as null, which no schema accepts.
 */
export function fromWire(data: unknown): unknown {
  if (data === null || typeof data !== 'object') return data;
  const text = (data as Partial<ExactWire>).exactJson;
  if (typeof text !== 'string') return data;
  try {
    return parseJson(text);
  } catch {
    return null;
  }
}
