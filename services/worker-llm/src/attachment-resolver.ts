/**
 * Attachment resolution (CONTRACT §2 `includeAttachments`): the deployment's
 * ATTACHMENT_RESOLVER_MODULE (Flowline has no file store) is loaded at boot; at attempt
 * time each text reference of the run input is resolved through it under the node's
 * AbortSignal. A resolver that throws, answers null or something other than `{ text }`,
 * or has not answered when the signal fires, skips that file; it never fails the node
 * (the signal itself still ends the attempt as Timeout/Cancelled/Interrupted). Images are
 * skipped without asking the resolver: the provider messages carry text only.
 * Logs carry counts only — never names or content.
 */
import { randomBytes } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { attachmentRefsOf, composeAttachments, type AttachmentRef, type ComposedAttachments, type ResolvedAttachment } from './attachments';
import { throwIfAborted } from './errors';
import type { NodeContext } from './nodes/context';

export interface AttachmentResolveContext {
  runId: string;
  nodeKey: string;
  signal: AbortSignal;
}

/** The export an ATTACHMENT_RESOLVER_MODULE must have. */
export type AttachmentResolver = (ref: AttachmentRef, ctx: AttachmentResolveContext) => Promise<{ text: string } | null>;

/** A boot-time failure naming the option. */
export class AttachmentResolverLoadError extends Error {
  override readonly name = 'AttachmentResolverLoadError';
}

/**
 * Loads ATTACHMENT_RESOLVER_MODULE (a path relative to the process cwd, an absolute path
 * or a package name), like TOOL_MODULES.
 * @throws AttachmentResolverLoadError naming the option when it fails to load or has no `resolveAttachment` function
 */
export async function loadAttachmentResolver(spec: string): Promise<AttachmentResolver> {
  const target = spec.startsWith('.') || isAbsolute(spec) ? pathToFileURL(resolve(spec)).href : spec;
  let mod: { resolveAttachment?: unknown };
  try {
    mod = (await import(target)) as { resolveAttachment?: unknown };
  } catch (cause) {
    throw new AttachmentResolverLoadError(`ATTACHMENT_RESOLVER_MODULE: cannot load ${spec}`, { cause });
  }
  if (typeof mod.resolveAttachment !== 'function') {
    throw new AttachmentResolverLoadError(`ATTACHMENT_RESOLVER_MODULE: ${spec} exports no resolveAttachment function`);
  }
  return mod.resolveAttachment as AttachmentResolver;
}

/** Resolves one reference; null (skipped) on anything but a `{ text: string }` answer in time. */
async function resolveOne(resolver: AttachmentResolver, ref: AttachmentRef, ctx: AttachmentResolveContext): Promise<string | null> {
  if (ref.kind !== 'text') return null;
  const { signal } = ctx;
  if (signal.aborted) return null;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<null>((done) => {
    onAbort = () => done(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answer = await Promise.race([
      Promise.resolve()
        .then(() => resolver({ ...ref }, ctx))
        .catch(() => null),
      aborted,
    ]);
    if (answer === null || typeof answer !== 'object') return null;
    const text = (answer as { text?: unknown }).text;
    return typeof text === 'string' ? text : null;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

export interface AttachmentSettings {
  /** null: ATTACHMENT_RESOLVER_MODULE unset, every attachment is skipped */
  resolver: AttachmentResolver | null;
  /** MAX_ATTACHMENT_TEXT_BYTES */
  maxTextBytes: number;
}

/**
 * The `## Attachments` section and skipped names for a node with `includeAttachments: true`
 * (null when the run input carries no attachment: the prompt stays as it was).
 * @throws LlmError when the node's signal fired while resolving
 */
export async function gatherAttachments(
  settings: AttachmentSettings,
  runInput: unknown,
  ctx: AttachmentResolveContext,
  logger: Logger,
): Promise<ComposedAttachments | null> {
  const refs = attachmentRefsOf(runInput);
  if (refs.length === 0) return null;
  const { resolver } = settings;
  const resolved: ResolvedAttachment[] = await Promise.all(
    refs.map(async (ref) => ({ ref, text: resolver ? await resolveOne(resolver, ref, ctx) : null })),
  );
  throwIfAborted(ctx.signal);
  const composed = composeAttachments(resolved, settings.maxTextBytes, () => randomBytes(16).toString('hex'));
  logger.info(
    { attachments: refs.length, included: composed.included, skipped: composed.skipped.length, truncated: composed.truncated },
    'attachments resolved',
  );
  return composed;
}

/** What a node adds for its attachments: the prompt section ('' for none) and the output member. */
export interface NodeAttachments {
  section: string;
  /** `{ attachmentsSkipped }` when something was skipped, else {} */
  output: { attachmentsSkipped?: string[] };
}

/**
 * The attachments part of an Agent/LlmCall turn: nothing unless `include` is true and the
 * run input carries attachments.
 */
export async function nodeAttachments(ctx: NodeContext, include: boolean | null | undefined): Promise<NodeAttachments> {
  if (include !== true) return { section: '', output: {} };
  const composed = await gatherAttachments(
    ctx.attachments,
    ctx.item.input.run.input,
    { runId: ctx.item.runId, nodeKey: ctx.item.nodeKey, signal: ctx.signal },
    ctx.logger,
  );
  if (composed === null) return { section: '', output: {} };
  return { section: composed.section, output: composed.skipped.length > 0 ? { attachmentsSkipped: composed.skipped } : {} };
}
