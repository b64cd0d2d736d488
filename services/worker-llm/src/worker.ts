/**
 * The LLM lane worker: takes `node.llm` jobs (LlmCall, Agent, DecisionModel), runs the
 * node under an AbortSignal that fires on the attempt deadline (Timeout), on a
 * cancellation from the cancel channel (Cancelled — also how a steer discards the old
 * flight) or at shutdown (Interrupted), and returns the outcome as the job's return
 * value. Every model call passes provider admission first and streams its deltas to
 * the invocation's activity feed; the job's first admission is reported as job progress,
 * which is what marks the node Running (a job waiting for capacity stays Queued). The
 * processing skeleton (payload parse, error coercion, logging) is libs/queue
 * `createLaneWorker`'s. Node failures never throw out of a job: a failed BullMQ job means
 * the worker itself broke. After a job finishes the worker publishes
 * a wake for its run.
 */
import type { Logger } from 'pino';
import { DEFAULT_TEMPLATE_LIMITS, FlowlineNodeError, failureClassOf, type Json, type TemplateLimits, type WorkItem } from '@flowline/graph';
import {
  DEFAULT_QUEUE_PREFIX,
  createActivityFeed,
  createLaneWorker,
  laneErrors,
  LaneAnswer,
  nodeSpanIds,
  type ActivityFeed,
  type AdmissionProgress,
  type LaneInvocation,
  type LaneJob,
  type LaneRunContext,
  type LaneWorker,
  type LaneWorkerSettings,
} from '@flowline/queue';
import { SpanKind, tracingEnabled, withSpan } from '@flowline/runtime';
import type { ToolRegistry } from '@flowline/tools';
import type { AttachmentSettings } from './attachment-resolver';
import { DEFAULT_MAX_ATTACHMENT_TEXT_BYTES } from './attachments';
import { createAdmission } from './admission';
import { LlmError, llmInvalid } from './errors';
import { runAgent } from './nodes/agent';
import { DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES, memoryAgentSteps, type AgentStepStore } from './nodes/agent-transcript';
import { sumUsage, usageJson } from './nodes/answer';
import type { NodeContext } from './nodes/context';
import { runDecisionModel } from './nodes/decision-model';
import { runLlmCall } from './nodes/llm-call';
import type { ModelTarget, ProviderRegistry } from './providers/registry';
import type { LlmResponse, LlmUsage } from './providers/types';
import { NO_LLM_METRICS, type LlmWorkerMetrics } from './metrics';

export interface LlmWorkerOptions extends LaneWorkerSettings<Logger> {
  providers: ProviderRegistry;
  /** the read-only tool registry an Agent may call */
  tools: ToolRegistry;
  /** MCP tools an Agent may call (`mcp:<server>/<tool>`, `mcp:<server>/*`) @default none */
  mcp?: NodeContext['mcp'];
  /** saved agents an Agent node names (`agentDefinitionId`) @default none (such a node fails ValidationFailed) */
  savedAgent?: NodeContext['savedAgent'];
  /** LANE_CONCURRENCY. @default 8 */
  concurrency?: number;
  /** MAX_RUN_INPUT_BYTES: budget of each data block in a prompt. @default 65536 */
  maxInputBytes?: number;
  /** MAX_TEMPLATE_OUTPUT_BYTES and TEMPLATE_RENDER_LIMIT_MS. @default DEFAULT_TEMPLATE_LIMITS */
  templateLimits?: TemplateLimits;
  /** `includeAttachments`: the loaded ATTACHMENT_RESOLVER_MODULE (null/absent: every attachment skipped) and MAX_ATTACHMENT_TEXT_BYTES (@default 65536) */
  attachments?: { resolver?: AttachmentSettings['resolver']; maxTextBytes?: number };
  /** admission slot lease, ms. @default 30000 */
  admissionLeaseMs?: number;
  /** activity stream cap and TTL */
  activityMaxLen?: number;
  activityTtlSeconds?: number;
  /** provider admission and token metrics (metrics.ts) @default NO_LLM_METRICS */
  metrics?: LlmWorkerMetrics;
  /**
   * Where Agents checkpoint their transcripts: main.ts passes Postgres (`pgAgentSteps`).
   * @default this process's memory (a kill or another worker replays nothing)
   */
  agentSteps?: AgentStepStore;
  /** MAX_AGENT_TRANSCRIPT_BYTES @default DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES */
  maxTranscriptBytes?: number;
}

/** start / stop / inFlight / worker: the shared lane-worker lifecycle. */
export type LlmWorker = LaneWorker;

const RUNNERS: Partial<Record<WorkItem['kind'], (ctx: NodeContext) => Promise<Json | LaneAnswer>>> = {
  LlmCall: runLlmCall,
  Agent: runAgent,
  DecisionModel: runDecisionModel,
};

/** A node's ids and kind as span attributes. */
function spanIds(item: WorkItem) {
  return { ...nodeSpanIds(item), 'flowline.node.kind': item.kind };
}

/** One span per model call, with the GenAI semantic conventions' attributes (never the prompt or the answer). */
function tracedChat(target: ModelTarget, complete: () => Promise<LlmResponse>): Promise<LlmResponse> {
  return withSpan(`chat ${target.model}`, { kind: SpanKind.CLIENT, attributes: chatAttributes(target.provider.name, target.model) }, async (span) => {
    const response = await complete();
    span?.setAttributes(usageAttributes(response.usage));
    return response;
  });
}

/** GenAI request attributes of a chat call (`gen_ai.system` beside its successor `gen_ai.provider.name`). */
function chatAttributes(provider: string, model: string) {
  return { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, 'gen_ai.system': provider, 'gen_ai.request.model': model };
}

/** GenAI usage attributes of a finished call (a count the provider did not report is left out). */
function usageAttributes(u: LlmUsage) {
  const a: Record<string, string | number | string[]> = {};
  if (u.inputTokens !== null) a['gen_ai.usage.input_tokens'] = u.inputTokens;
  if (u.outputTokens !== null) a['gen_ai.usage.output_tokens'] = u.outputTokens;
  if (u.model !== null) a['gen_ai.response.model'] = u.model;
  if (u.finishReason !== null) a['gen_ai.response.finish_reasons'] = [u.finishReason];
  return a;
}

/** Creates (but does not start) an LLM lane worker. */
export function createLlmWorker(opts: LlmWorkerOptions): LlmWorker {
  const prefix = opts.prefix ?? DEFAULT_QUEUE_PREFIX;
  const now = opts.now ?? Date.now;
  const maxInputBytes = opts.maxInputBytes ?? 65_536;
  const templates = opts.templateLimits ?? DEFAULT_TEMPLATE_LIMITS;
  const attachments: AttachmentSettings = {
    resolver: opts.attachments?.resolver ?? null,
    maxTextBytes: opts.attachments?.maxTextBytes ?? DEFAULT_MAX_ATTACHMENT_TEXT_BYTES,
  };
  const metrics = opts.metrics ?? NO_LLM_METRICS;
  const agentSteps = opts.agentSteps ?? memoryAgentSteps();
  const maxTranscriptBytes = opts.maxTranscriptBytes ?? DEFAULT_MAX_AGENT_TRANSCRIPT_BYTES;
  const admission = createAdmission({ redis: opts.redis, prefix, leaseMs: opts.admissionLeaseMs });

  function contextFor(
    item: WorkItem,
    signal: AbortSignal,
    feed: ActivityFeed,
    jobLog: Logger,
    job: LaneJob,
    invocation: LaneInvocation,
    spent: LlmUsage[],
  ): NodeContext {
    // On this lane (ADMISSION_START_LANES) the node starts at its first admission, not at
    // pickup, so a job waiting for provider capacity keeps its node Queued: the start is
    // reported to the dispatcher then (the lane shell's report), and the job's progress
    // records it for the dispatcher's in-flight check. Not awaited: a lost report only
    // leaves the node Queued until its outcome.
    const progress = (value: AdmissionProgress) =>
      void job.updateProgress(value).catch((err: unknown) => jobLog.debug({ err }, 'progress update failed'));
    return {
      item,
      signal,
      maxInputBytes,
      templates,
      attachments,
      tools: opts.tools,
      mcp: opts.mcp,
      savedAgent: opts.savedAgent,
      logger: jobLog,
      agentSteps,
      maxTranscriptBytes,
      phase: (text) => feed.push('phase', text),
      toolActivity: (text) => feed.push('toolCall', text),
      resolveModel: (pin) => opts.providers.resolve(pin),
      async call(target, request) {
        const askedAt = now();
        let waited = false;
        const lease = await admission.acquire(target.key, target.limits, signal, (waitMs) => {
          waited = true;
          feed.push('phase', 'waiting for provider capacity');
          if (invocation.startedAt === null) progress({ phase: 'waiting-for-capacity', provider: target.key });
          jobLog.info({ provider: target.key, waitMs }, 'waiting for provider capacity');
        });
        metrics.admitted(target.key, waited ? now() - askedAt : 0);
        // the node starts at its first admission: the outcome's startedAt (a node that never got capacity never "started")
        if (invocation.startedAt === null) {
          const at = now();
          invocation.started(at);
          progress({ phase: 'admitted', provider: target.key, at });
        }
        feed.push('phase', `calling ${target.key}`);
        try {
          const complete = () =>
            target.provider.complete(
              { ...request, model: target.model },
              { signal, invocationId: item.invocationId, onDelta: (d) => feed.push(d.type, d.text) },
            );
          const response = await (tracingEnabled() ? tracedChat(target, complete) : complete());
          metrics.usage(target.key, response.usage);
          spent.push(response.usage);
          await lease.release(response.usage.totalTokens);
          return response;
        } catch (error) {
          await lease.release(null);
          if (error instanceof LlmError && error.rateLimited) {
            await admission.coolDown(target.key, error.retryAfterMs).catch((err: unknown) => jobLog.warn({ err }, 'cool-down write failed'));
          }
          throw error;
        }
      },
    };
  }

  /** One item: the runner's answer is the output; the activity feed ends with the outcome. */
  async function run(item: WorkItem, { job, invocation, log: jobLog }: LaneRunContext<Logger>): Promise<Json | LaneAnswer> {
    const ids = { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId };
    const feed = createActivityFeed(
      { redis: opts.redis, prefix, maxLen: opts.activityMaxLen, ttlSeconds: opts.activityTtlSeconds, onError: (err) => jobLog.debug({ err }, 'activity write failed') },
      ids,
    );
    let output: Json | LaneAnswer;
    // every model answer of this attempt: a failure after one still reports what it spent
    const spent: LlmUsage[] = [];
    try {
      const runner = item.lane === 'llm' ? RUNNERS[item.kind] : undefined;
      if (!runner) throw llmInvalid(`a ${item.kind} node cannot run on the llm lane`);
      if (item.deadlineAt <= now()) throw new LlmError('Timeout', 'the attempt deadline passed before the model call started');
      const ctx = contextFor(item, invocation.signal, feed, jobLog, job, invocation, spent);
      // the node's execution span, under the job's process span (its model calls are its children)
      output = await withSpan(`node ${item.kind}`, { attributes: spanIds(item) }, () => runner(ctx));
    } catch (error) {
      if (error instanceof FlowlineNodeError && spent.length > 0) error.usage = usageJson(sumUsage(spent));
      await feed.end(`failed: ${failureClassOf(error)}`);
      throw error;
    }
    await feed.end(output instanceof LaneAnswer && 'park' in output.answer ? 'parked: a tool call waits for approval' : 'succeeded');
    return output;
  }

  return createLaneWorker<Logger>({
    ...opts,
    lane: 'llm',
    prefix,
    concurrency: opts.concurrency ?? 8,
    now,
    errors: laneErrors((failureClass, message) => new LlmError(failureClass, message)),
    unexpectedFailureReason: 'the LLM worker failed to run the node',
    run,
  });
}
