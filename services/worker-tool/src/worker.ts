/**
 * The tool lane worker: takes `node.tool` jobs, runs the named tool under an
 * AbortSignal that fires on the attempt deadline (Timeout), on a cancellation from
 * the cancel channel (Cancelled) or at shutdown (Interrupted), and returns the
 * outcome as the job's return value (the processing skeleton is libs/queue
 * `createLaneWorker`'s). Tool failures never throw out of a job: a failed BullMQ job
 * means the worker itself broke. An `mcp:<server>/<tool>` is called through the MCP toolbox
 * for the run's tenant, its progress notifications written to the invocation's activity
 * feed. After a job finishes the worker
 * publishes a wake for its run so the owning dispatcher settles it at once.
 */
import type { Logger } from 'pino';
import { DEFAULT_TEMPLATE_LIMITS, failureClassOf, isMcpToolName, type Json, type JsonObject, type TemplateLimits, type WorkItem } from '@flowline/graph';
import {
  DEFAULT_QUEUE_PREFIX,
  createActivityFeed,
  createLaneWorker,
  laneErrors,
  nodeSpanIds,
  type LaneRunContext,
  type LaneWorker,
  type LaneWorkerSettings,
} from '@flowline/queue';
import { withSpan } from '@flowline/runtime';
import { ToolError, mcpProgressText, toolInvalid, type McpToolbox, type ToolRegistry } from '@flowline/tools';
import { resolveToolCall } from './tool-call';
import { DEFAULT_TOOL_LANE_CONCURRENCY } from './config';

export interface ToolWorkerOptions extends LaneWorkerSettings<Logger> {
  registry: ToolRegistry;
  /** LANE_CONCURRENCY. @default DEFAULT_TOOL_LANE_CONCURRENCY (100) */
  concurrency?: number;
  /** MAX_TEMPLATE_OUTPUT_BYTES and TEMPLATE_RENDER_LIMIT_MS: bounds of the rendered arguments. @default DEFAULT_TEMPLATE_LIMITS */
  templateLimits?: TemplateLimits;
  /**
   * MCP tools (`toolName: "mcp:<server>/<tool>"`): the toolbox, and the tenant of a run (the
   * server is the run's tenant's). Absent: such a node fails ValidationFailed.
   */
  mcp?: { toolbox: McpToolbox; tenantOf(runId: string): Promise<string | null> };
}

/** start / stop / inFlight / worker: the shared lane-worker lifecycle. */
export type ToolWorker = LaneWorker;

/** Creates (but does not start) a tool lane worker. */
export function createToolWorker(opts: ToolWorkerOptions): ToolWorker {
  const now = opts.now ?? Date.now;
  const templates = opts.templateLimits ?? DEFAULT_TEMPLATE_LIMITS;

  /** One item: the tool's result is the output; a ToolError is the lane's typed failure. */
  async function run(item: WorkItem, { invocation, log }: LaneRunContext<Logger>): Promise<Json> {
    if (item.lane !== 'tool' || item.kind !== 'Tool') throw toolInvalid(`a ${item.kind} node cannot run on the tool lane`);
    if (item.deadlineAt <= now()) throw new ToolError('Timeout', 'the attempt deadline passed before the tool started');
    const call = resolveToolCall(item.config, item.input, item.nodeKey, templates);
    // the node's execution span (GenAI semantic conventions' execute_tool), under the job's process span
    const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.toolName, ...nodeSpanIds(item) };
    if (isMcpToolName(call.toolName)) {
      const result = await withSpan(`execute_tool ${call.toolName}`, { attributes }, () => callMcp(item, call.toolName, call.args, invocation.signal, log));
      return { result };
    }
    const result = await withSpan(`execute_tool ${call.toolName}`, { attributes }, () =>
      opts.registry.invoke(call.toolName, call.args, {
        signal: invocation.signal,
        allowedUrls: call.allowedUrls,
        runId: item.runId,
        nodeKey: item.nodeKey,
        attempt: item.attempt,
        invocationId: item.invocationId,
        input: item.input,
        logger: log,
      }),
    );
    return { result };
  }

  /**
   * An MCP tool call for the run's tenant; its progress notifications go to the invocation's
   * activity feed as `phase` entries, which ends with the outcome as the LLM lane's does.
   */
  async function callMcp(item: WorkItem, toolName: string, args: JsonObject, signal: AbortSignal, log: Logger): Promise<Json> {
    if (opts.mcp === undefined) throw toolInvalid('this tool worker has no MCP toolbox');
    const tenant = await opts.mcp.tenantOf(item.runId);
    if (tenant === null) throw toolInvalid('the run of this node is gone');
    const feed = createActivityFeed(
      { redis: opts.redis, prefix: opts.prefix ?? DEFAULT_QUEUE_PREFIX, onError: (err) => log.debug({ err }, 'activity write failed') },
      { runId: item.runId, nodeKey: item.nodeKey, invocationId: item.invocationId },
    );
    try {
      const result = await opts.mcp.toolbox.call(tenant, toolName, args, { signal, onProgress: (p) => feed.push('phase', mcpProgressText(p)), logger: log });
      await feed.end('succeeded');
      return result;
    } catch (error) {
      await feed.end(`failed: ${failureClassOf(error)}`);
      throw error;
    }
  }

  return createLaneWorker<Logger>({
    ...opts,
    lane: 'tool',
    concurrency: opts.concurrency ?? DEFAULT_TOOL_LANE_CONCURRENCY,
    now,
    errors: laneErrors((failureClass, message) => new ToolError(failureClass, message)),
    unexpectedFailureReason: 'the tool worker failed to run the tool',
    run,
    // the call's arguments rendered and its config read (zod) once at start, not on the first job
    warmUp: (item) => void resolveToolCall(item.config, item.input, item.nodeKey, templates),
  });
}
