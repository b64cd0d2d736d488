/**
 * Attachment resolution (CONTRACT §2 `includeAttachments`): by default each reference of
 * the run input is read from Flowline's file store (uploads of POST /v1/files) as the
 * run's tenant — {@link fileStoreResolver}; a deployment may replace that with its own
 * ATTACHMENT_RESOLVER_MODULE, loaded at boot. At attempt time each reference is resolved
 * under the node's AbortSignal. A text file needs a `{ text }` answer, an image file a
 * `{ image: { contentType: image/*, bytes } }` answer: a resolver that throws, answers
 * anything else, or has not answered when the signal fires, skips that file; it never
 * fails the node (the signal itself still ends the attempt as Timeout/Cancelled/Interrupted).
 * Images go to the model as image content parts of the user message ({@link withImages});
 * a model that takes no images fails the node ValidationFailed naming the file and model.
 * Logs carry counts only — never names or content.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { APIError } from 'openai';
import type { FileStore } from '@flowline/db';
import {
  attachmentRefsOf,
  composeAttachments,
  type AttachedImage,
  type AttachmentRef,
  type ComposedAttachments,
  type ResolvedAttachment,
} from './attachments';
import { importModuleSpec } from '@flowline/tools';
import { LlmError, throwIfAborted } from './errors';
import type { NodeContext } from './nodes/context';
import type { ModelTarget } from './providers/registry';

export interface AttachmentResolveContext {
  runId: string;
  nodeKey: string;
  signal: AbortSignal;
}

/** What a resolver answers for one reference: a text file's text, an image file's bytes, or null (skip it). */
export type AttachmentContent = { text: string } | { image: { contentType: string; bytes: Uint8Array } } | null;

/** The export an ATTACHMENT_RESOLVER_MODULE must have. */
export type AttachmentResolver = (ref: AttachmentRef, ctx: AttachmentResolveContext) => Promise<AttachmentContent>;

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
  const mod = await importModuleSpec<{ resolveAttachment?: unknown }>(
    spec,
    (cause) => new AttachmentResolverLoadError(`ATTACHMENT_RESOLVER_MODULE: cannot load ${spec}`, { cause }),
  );
  if (typeof mod.resolveAttachment !== 'function') {
    throw new AttachmentResolverLoadError(`ATTACHMENT_RESOLVER_MODULE: ${spec} exports no resolveAttachment function`);
  }
  return mod.resolveAttachment as AttachmentResolver;
}

/** The answer's text (text reference) or image (image reference); null when it cannot be used. */
function usable(ref: AttachmentRef, answer: unknown): Pick<ResolvedAttachment, 'text' | 'image'> {
  if (answer === null || typeof answer !== 'object') return { text: null, image: null };
  if (ref.kind === 'text') {
    const text = (answer as { text?: unknown }).text;
    return { text: typeof text === 'string' ? text : null };
  }
  const image = (answer as { image?: { contentType?: unknown; bytes?: unknown } }).image;
  if (!image || typeof image.contentType !== 'string' || !/^image\/[A-Za-z0-9.+-]+$/.test(image.contentType) || !(image.bytes instanceof Uint8Array)) {
    return { text: null, image: null };
  }
  return { text: null, image: { dataUrl: `data:${image.contentType.toLowerCase()};base64,${Buffer.from(image.bytes).toString('base64')}` } };
}

/** Resolves one reference; nothing usable (skipped) on a throw, a wrong answer, or no answer in time. */
async function resolveOne(resolver: AttachmentResolver, ref: AttachmentRef, ctx: AttachmentResolveContext): Promise<ResolvedAttachment> {
  const { signal } = ctx;
  if (signal.aborted) return { ref, text: null, image: null };
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
    return { ref, ...usable(ref, answer) };
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Reads a stored file's content whole, or null once it passes `maxBytes`. */
async function readAll(content: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer | null> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const part of content) {
    total += part.byteLength;
    if (total > maxBytes) return null;
    parts.push(part);
  }
  return Buffer.concat(parts, total);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The default resolver: a reference's file read from the file store as the run's tenant
 * (`tenantOf(runId)`), so a run can only read its own tenant's uploads. The stored kind
 * decides, not the reference's: a text reference to an image (or the reverse) is skipped,
 * as is a text file that is not UTF-8, an image over `maxImageBytes`, or a text file over
 * `maxTextFileBytes` (its text is cut to MAX_ATTACHMENT_TEXT_BYTES later anyway).
 */
export function fileStoreResolver(
  store: FileStore,
  tenantOf: (runId: string) => Promise<string | null>,
  limits: { maxImageBytes: number; maxTextFileBytes: number },
): AttachmentResolver {
  return async (ref, ctx) => {
    const tenant = await tenantOf(ctx.runId);
    if (tenant === null) return null;
    const opened = await store.open(tenant, ref.fileId);
    if (!opened || opened.file.kind !== ref.kind) return null;
    const max = ref.kind === 'image' ? limits.maxImageBytes : limits.maxTextFileBytes;
    if (opened.file.bytes > max) return null;
    const bytes = await readAll(opened.content, max);
    if (bytes === null) return null;
    if (ref.kind === 'image') return { image: { contentType: opened.file.contentType.split(';')[0]!.trim(), bytes } };
    try {
      return { text: utf8.decode(bytes) };
    } catch {
      return null;
    }
  };
}

export interface AttachmentSettings {
  /** the file store resolver, or ATTACHMENT_RESOLVER_MODULE's; null: every attachment is skipped */
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
    refs.map(async (ref) => (resolver ? resolveOne(resolver, ref, ctx) : { ref, text: null, image: null })),
  );
  throwIfAborted(ctx.signal);
  const composed = composeAttachments(resolved, settings.maxTextBytes, () => randomBytes(16).toString('hex'));
  logger.info(
    { attachments: refs.length, included: composed.included, images: composed.images.length, skipped: composed.skipped.length, truncated: composed.truncated },
    'attachments resolved',
  );
  return composed;
}

/** What a node adds for its attachments: the prompt section ('' for none), its images and the output member. */
export interface NodeAttachments {
  section: string;
  /** image files to send as image content parts of the user message */
  images: AttachedImage[];
  /** `{ attachmentsSkipped }` when something was skipped, else {} */
  output: { attachmentsSkipped?: string[] };
}

/**
 * The attachments part of an Agent/LlmCall turn: nothing unless `include` is true and the
 * run input carries attachments.
 */
export async function nodeAttachments(ctx: NodeContext, include: boolean | null | undefined): Promise<NodeAttachments> {
  if (include !== true) return { section: '', images: [], output: {} };
  const composed = await gatherAttachments(
    ctx.attachments,
    ctx.item.input.run.input,
    { runId: ctx.item.runId, nodeKey: ctx.item.nodeKey, signal: ctx.signal },
    ctx.logger,
  );
  if (composed === null) return { section: '', images: [], output: {} };
  return {
    section: composed.section,
    images: composed.images,
    output: composed.skipped.length > 0 ? { attachmentsSkipped: composed.skipped } : {},
  };
}

/** A provider's 400 that is about image input (its text is read here, never repeated). */
function refusesImages(err: LlmError): boolean {
  const cause = err.cause;
  return err.failureClass === 'ValidationFailed' && cause instanceof APIError && cause.status === 400 && /image|vision|multi-?modal/i.test(cause.message);
}

function imageRefusal(target: ModelTarget, images: readonly AttachedImage[], nodeKey: string, why: string): LlmError {
  const names = images.map((i) => JSON.stringify(i.name)).join(', ');
  return new LlmError('ValidationFailed', `model ${target.key} ${why}: the image attachment ${names} of node ${nodeKey} cannot be sent to it`);
}

/**
 * The node's model call for a turn that carries `images`: refused before any call when the
 * model is configured without vision (LLM_VISION, LLM_PROVIDERS `vision`), and a provider's
 * 400 about image input becomes a ValidationFailed naming the files, the model and the node
 * (never the provider's text). Without images, `call` as it is.
 */
export function withImages<A extends unknown[], R>(
  target: ModelTarget,
  images: readonly AttachedImage[],
  nodeKey: string,
  call: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  if (images.length === 0) return call;
  if (target.vision === false) throw imageRefusal(target, images, nodeKey, 'takes no image input');
  return async (...args) => {
    try {
      return await call(...args);
    } catch (err) {
      if (err instanceof LlmError && refusesImages(err)) throw imageRefusal(target, images, nodeKey, 'refused image input');
      throw err;
    }
  };
}
