/**
 * Zod schemas of what crosses Redis: the job payload (a planner `WorkItem`), the job
 * return value (a worker's outcome keyed by invocation), and the cancel and wake
 * messages. Each side parses what it reads; nothing trusts Redis content blindly. Job
 * payloads and return values travel in their wire form (wire.ts), which
 * {@link parseWorkItem} / {@link parseWorkReturn} read.
 */
import { z } from 'zod';
import {
  FAILURE_CLASSES,
  JsonNumber,
  NODE_KINDS,
  type InputDocument,
  type Lane,
  type Json,
  type JsonObject,
  type OutputEnvelope,
  type WorkItem,
  type WorkOutcome,
} from '@flowline/graph';
import { fromWire, type Wire } from './wire';
import { isExactWakeMessage, isExactWorkItem } from './exact-shape';

/**
 * Any JSON value, exact numbers included: a `JsonNumber` (a number a double cannot hold,
 * as the lossless parser reads it) is accepted and kept as it is, wherever it sits.
 */
export const jsonSchema: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.instanceof(JsonNumber), z.array(jsonSchema), z.record(z.string(), jsonSchema)]),
) as z.ZodType<Json>;
export const jsonObjectSchema: z.ZodType<JsonObject> = z.record(z.string(), jsonSchema);

const failureClassSchema = z.enum(FAILURE_CLASSES);

export const outputEnvelopeSchema: z.ZodType<OutputEnvelope> = z.object({
  status: z.enum(['succeeded', 'failed', 'skipped']),
  attempt: z.number().int().nonnegative(),
  branch: z.string().nullable(),
  output: jsonSchema,
  error: z.object({ class: failureClassSchema, reason: z.string() }).optional(),
  /** the run-state keys the node's out-edges route on, as of its commit */
  state: jsonObjectSchema.optional(),
});

const envelopeMapSchema = z.record(z.string(), outputEnvelopeSchema);

export const inputDocumentSchema: z.ZodType<InputDocument> = z.object({
  run: z.object({ input: jsonSchema }),
  upstream: envelopeMapSchema,
  // Usually a predecessor's envelope or a map of them; an operator's input edit
  // (CONTRACT §8) replaces it with any JSON value, so any JSON is accepted.
  input: z.union([outputEnvelopeSchema, envelopeMapSchema, jsonSchema]).nullable() as z.ZodType<InputDocument['input']>,
  /** the run state when the node started (a graph that keeps state) */
  state: jsonObjectSchema.optional(),
});

const idSchema = z.string().min(1).max(200);

/** The BullMQ job payload: exactly the planner's WorkItem. */
export const workItemSchema: z.ZodType<WorkItem> = z.object({
  lane: z.enum(['llm', 'tool']),
  runId: idSchema,
  nodeKey: idSchema,
  kind: z.enum(NODE_KINDS),
  invocationId: idSchema,
  attempt: z.number().int().positive(),
  config: jsonObjectSchema,
  input: inputDocumentSchema,
  deadlineAt: z.number().int(),
  steering: z.array(z.string()),
  outputSchema: jsonObjectSchema.nullable(),
  chat: z.literal(true).optional(),
  agent: z
    .object({
      generation: z.number().int().positive(),
      decision: z
        .object({ operationId: z.string(), decision: z.enum(['Approve', 'Reject']), comment: z.string().nullable(), payload: jsonSchema })
        .optional(),
    })
    .optional(),
});

export const workOutcomeSchema: z.ZodType<WorkOutcome> = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    output: jsonSchema,
    startedAt: z.number().nullable(),
    finishedAt: z.number(),
    usage: jsonObjectSchema.optional(),
  }),
  z.object({
    ok: z.literal(false),
    failureClass: failureClassSchema,
    reason: z.string(),
    startedAt: z.number().nullable(),
    finishedAt: z.number(),
    usage: jsonObjectSchema.optional(),
  }),
  z.object({
    ok: z.literal('park'),
    request: z.object({
      kind: z.literal('ToolCall'),
      tool: z.string().min(1),
      arguments: jsonObjectSchema.nullable(),
      step: z.number().int().positive(),
    }),
    startedAt: z.number().nullable(),
    finishedAt: z.number(),
    usage: jsonObjectSchema.optional(),
  }),
]);

/** What a worker returns from a job (the BullMQ return value). */
export interface WorkReturn {
  runId: string;
  nodeKey: string;
  invocationId: string;
  outcome: WorkOutcome;
}

export const workReturnSchema: z.ZodType<WorkReturn> = z.object({
  runId: idSchema,
  nodeKey: idSchema,
  invocationId: idSchema,
  outcome: workOutcomeSchema,
});

/**
 * A job payload (its wire form, as BullMQ hands it to a worker) read as a work item. A payload
 * the hand-written check accepts (exact-shape.ts: exactly what zod would return unchanged) is
 * taken as it is; anything else goes through the zod schema.
 */
export function parseWorkItem(data: unknown): z.ZodSafeParseResult<WorkItem> {
  const value = fromWire(data);
  if (isExactWorkItem(value)) return { success: true, data: value };
  return workItemSchema.safeParse(value);
}

/** A job return value (its wire form, as BullMQ or a wake message carries it) read as a work return. */
export function parseWorkReturn(data: unknown): z.ZodSafeParseResult<WorkReturn> {
  return workReturnSchema.safeParse(fromWire(data));
}

/**
 * Job progress of a lane whose node starts at its admission, not when BullMQ hands the
 * job to a worker: an LLM job taken by a worker may still wait for provider capacity
 * (holding no provider slot and spending no attempt), and its node keeps reading Queued
 * until the worker reports `admitted` (`at`: the worker's clock when the first model
 * call was admitted). The `admitted` report is sticky for the job: a later wait of the
 * same job (an Agent's next model call) shows only in the activity feed.
 */
export type AdmissionProgress =
  | { phase: 'waiting-for-capacity'; provider: string }
  | { phase: 'admitted'; provider: string; at: number };

export const admissionProgressSchema: z.ZodType<AdmissionProgress> = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('waiting-for-capacity'), provider: z.string() }),
  z.object({ phase: z.literal('admitted'), provider: z.string(), at: z.number() }),
]);

/** Lanes whose node reads Running from the worker's `admitted` progress instead of BullMQ's `active`. */
export const ADMISSION_START_LANES: readonly Lane[] = ['llm'];

/** True when `lane`'s start is reported by {@link AdmissionProgress}. */
export function startsOnAdmission(lane: Lane): boolean {
  return ADMISSION_START_LANES.includes(lane);
}

/** The admission time of a job's progress value; null while it is not (known to be) admitted. */
export function admittedAt(progress: unknown): number | null {
  const parsed = admissionProgressSchema.safeParse(progress);
  return parsed.success && parsed.data.phase === 'admitted' ? parsed.data.at : null;
}

/** A cancellation published on `cancelChannel`. */
export interface CancelMessage {
  invocationId: string;
  reason: string | null;
}

export const cancelMessageSchema: z.ZodType<CancelMessage> = z.object({
  invocationId: idSchema,
  reason: z.string().nullable().default(null),
});

/** A node's work started (Queued → Running) at `at`, epoch ms. */
export interface WorkStartReport {
  invocationId: string;
  nodeKey: string;
  at: number;
}

/** A lane job failed (the worker threw, or died and its job stalled): the node is Interrupted. */
export interface WorkFailureReport {
  invocationId: string;
  reason: string;
  at: number;
}

/**
 * A wake-up published on `wakeChannel`. Without a report it says the run changed in the
 * store (API intent, operator, child, peer dispatcher). A lane worker's message carries
 * what happened to its job — its outcome (`ret`), its start, or its failure — so the
 * run's owner learns it from this one message; like every message it is a hint, and the
 * dispatcher's in-flight check heals one that is lost. A failure of a job whose run the
 * worker cannot name (a stalled job) has no `runId`. This is the message as read; a worker
 * publishes the outcome in its wire form ({@link WakeMessageWire}).
 */
export interface WakeMessage {
  runId?: string;
  /** the run's tenant, when the publisher knows it (a new run or an API intent): the owner's tick order is fair across tenants */
  tenantId?: string;
  ret?: WorkReturn;
  started?: WorkStartReport;
  failed?: WorkFailureReport;
}

/** A wake message as published: the outcome (`ret`) in its wire form (wire.ts). */
export type WakeMessageWire = Omit<WakeMessage, 'ret'> & { ret?: Wire<WorkReturn> };

export const wakeMessageSchema: z.ZodType<WakeMessage> = z
  .object({
    runId: idSchema.optional(),
    tenantId: idSchema.optional(),
    ret: z.preprocess(fromWire, workReturnSchema).optional(),
    started: z.object({ invocationId: idSchema, nodeKey: z.string().min(1), at: z.number() }).optional(),
    failed: z.object({ invocationId: idSchema, reason: z.string(), at: z.number() }).optional(),
  })
  .refine((m) => m.runId !== undefined || m.failed !== undefined, 'a wake names its run (or a failed job)');

/**
 * Parses a wake message body; null when it is not JSON or does not match
 * {@link wakeMessageSchema}. The exact shape a worker or dispatcher publishes is checked by
 * hand (exact-shape.ts); anything else goes through the zod schema.
 */
export function parseWakeMessage(raw: string): WakeMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const m = value as { ret?: unknown } | null;
  const read = m !== null && typeof m === 'object' && !Array.isArray(m) && m.ret !== undefined ? { ...m, ret: fromWire(m.ret) } : value;
  if (isExactWakeMessage(read)) return read;
  const parsed = wakeMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Parses a pub/sub message body; null when it is not JSON or does not match. */
export function parseMessage<T>(schema: z.ZodType<T>, raw: string): T | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
