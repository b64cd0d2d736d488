/**
 * Agent (CONTRACT §2, reference §4.2): a tool-calling loop over the read-only tool
 * registry and the MCP tools it names (agent-tools.ts). The seed turn is the instructions, then in a Chat graph the `## Conversation
 * request` section (the user's message, always), then (unless `includeUpstreamOutputs`
 * is false) the upstream map budgeted at MAX_RUN_INPUT_BYTES with an explicit
 * truncation marker, then (with `includeAttachments: true` on a run whose input carries
 * attachments) the `## Attachments` section, then a steered row's `## Operator steering`
 * section; skipped attachments are named in the output's `attachmentsSkipped`.
 * Each iteration is one model call; tool results are fed back as tool messages. The
 * last allowed iteration (`maxIterations`) — or any iteration once `maxToolCalls` is
 * spent — offers no tools, so the model must answer. Tool calls are recorded
 * `{ name, arguments?, ok, error? }` (arguments only when small; results never).
 */
import { agentReferenceOf, memberNamed, mergeSavedAgent, NODE_KIND_SPECS, parseJson, stringifyJson, type Json, type JsonObject } from '@flowline/graph';
import { ToolError } from '@flowline/tools';
import { nodeAttachments, withImages } from '../attachment-resolver';
import { abortErrorOf, llmFailed, llmInvalid } from '../errors';
import { conversationRequestSection, cutToBytes, dataBlock, joinParts, steeringSection, truncationMarker } from '../prompt';
import { renderPromptText } from '../templates';
import type { LlmMessage, LlmToolCall, LlmUsage } from '../providers/types';
import { agentTools } from './agent-tools';
import { readJsonAnswer, stripThinking, sumUsage, usageJson } from './answer';
import { agentConfigSchema, readConfig } from './config';
import type { NodeContext, SavedAgentPin } from './context';

/** Model calls an Agent makes when `maxIterations` is not set (the default the graph reference states). */
export const DEFAULT_MAX_ITERATIONS = agentDefault('maxIterations');
/** Tool calls an Agent may make when `maxToolCalls` is not set (the default the graph reference states). */
export const DEFAULT_MAX_TOOL_CALLS = agentDefault('maxToolCalls');
/** A tool result fed back to the model is cut to this many UTF-8 bytes (with the marker). */
export const TOOL_RESULT_MAX_BYTES = 16_384;
/** Arguments larger than this are not recorded in `toolCalls`. */
export const RECORDED_ARGUMENTS_MAX_BYTES = 1_024;

function agentDefault(member: 'maxIterations' | 'maxToolCalls'): number {
  const value = memberNamed(NODE_KIND_SPECS.Agent.config, member)?.default;
  if (typeof value !== 'number') throw new Error(`the Agent description states no numeric default for ${member}`);
  return value;
}

const AGENT_SYSTEM_PROMPT =
  'You are an unattended workflow agent. Complete the task given by the user message. ' +
  'Call the offered tools when they help; when you are done, answer directly.';

/** One entry of the output's `toolCalls`. */
export interface ToolCallRecord {
  name: string;
  arguments?: JsonObject;
  ok: boolean;
  error?: string;
}

function parseArguments(raw: string): JsonObject | null {
  try {
    const value: unknown = parseJson(raw.trim() === '' ? '{}' : raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

function feedBack(result: Json): string {
  return feedBackText(stringifyJson(result));
}

function feedBackText(text: string): string {
  const cut = cutToBytes(text, TOOL_RESULT_MAX_BYTES);
  return cut.bytes < cut.totalBytes ? `${cut.text}\n${truncationMarker(cut.bytes, cut.totalBytes)}` : text;
}

/**
 * The saved agent the node names (`config.agentDefinitionId`), at the version the run pinned
 * when it started; null when it names none.
 * @throws LlmError ValidationFailed when the agent (or its pinned version) no longer exists
 */
async function savedAgentOf(ctx: NodeContext): Promise<SavedAgentPin | null> {
  const ref = agentReferenceOf('Agent', ctx.item.config);
  if (ref === null) return null;
  if (ctx.savedAgent === undefined) throw llmInvalid('this LLM worker reads no saved agents');
  const pinned = await ctx.savedAgent(ctx.item.runId, ctx.item.nodeKey, ref);
  if (pinned === null) throw llmInvalid(`saved agent ${ref.id} (or the version this run pinned) no longer exists`);
  return pinned;
}

/** Runs an Agent node; returns its output document (`agent: { id, version }` when it used a saved agent). */
export async function runAgent(ctx: NodeContext): Promise<Json> {
  const saved = await savedAgentOf(ctx);
  const config = readConfig(agentConfigSchema, 'Agent', saved ? mergeSavedAgent(saved.members, ctx.item.config) : ctx.item.config);
  const instructions = renderPromptText(ctx.item, 'instructions', config.instructions, ctx.templates);
  const target = await ctx.resolveModel(config.model);
  const tools = await agentTools(ctx, config.tools ?? []);
  const offered = tools.specs;
  const maxIterations = config.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const maxToolCalls = config.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const schema = config.responseJsonSchema ?? null;
  const upstream = config.includeUpstreamOutputs === false ? null : dataBlock('Upstream outputs', ctx.item.input.upstream, ctx.maxInputBytes);
  // in a Chat graph the user's message is always shown, whatever includeUpstreamOutputs says
  const request = ctx.item.chat === true ? conversationRequestSection(ctx.item.input.run.input, ctx.maxInputBytes) : null;
  const attached = await nodeAttachments(ctx, config.includeAttachments);
  const messages: LlmMessage[] = [
    { role: 'system', content: AGENT_SYSTEM_PROMPT },
    {
      role: 'user',
      content: joinParts(instructions, request, upstream, attached.section, steeringSection(ctx.item.steering)),
      ...(attached.images.length > 0 ? { images: attached.images.map((i) => ({ dataUrl: i.dataUrl })) } : {}),
    },
  ];
  const call = withImages(target, attached.images, ctx.item.nodeKey, ctx.call.bind(ctx));
  const records: ToolCallRecord[] = [];
  const usages: LlmUsage[] = [];
  // what the model reasoned on each call, kept with the output (sealed with it when encryption is on)
  const reasoning: string[] = [];

  /** tool calls made so far in this attempt: each call's idempotency key carries its position */
  let agentCalls = 0;

  async function runTool(call: LlmToolCall): Promise<string> {
    const args = parseArguments(call.arguments);
    const small = args !== null && Buffer.byteLength(call.arguments, 'utf8') <= RECORDED_ARGUMENTS_MAX_BYTES;
    const name = tools.label(call.name);
    const record = (ok: boolean, error?: string): void =>
      void records.push({ name, ...(small && args ? { arguments: args } : {}), ok, ...(error ? { error } : {}) });
    const target = tools.target(call.name);
    if (target === undefined) {
      record(false, `tool ${call.name.slice(0, 64)} is not offered`);
      return 'error: this tool is not offered';
    }
    if (args === null) {
      record(false, 'the arguments are not a JSON object');
      return 'error: the arguments are not a JSON object';
    }
    ctx.toolActivity(name);
    try {
      if (target.kind === 'mcp') {
        const shown = await tools.callMcp(target.ref, args);
        // an MCP call counts toward the attempt's calls like any other (its idempotency position)
        agentCalls++;
        record(true);
        return feedBackText(shown);
      }
      const result = await ctx.tools.invoke(target.name, args, {
        signal: ctx.signal,
        allowedUrls: [],
        runId: ctx.item.runId,
        nodeKey: ctx.item.nodeKey,
        attempt: ctx.item.attempt,
        invocationId: ctx.item.invocationId,
        input: ctx.item.input,
        agentCall: ++agentCalls,
        logger: ctx.logger,
      });
      record(true);
      return feedBack(result);
    } catch (error) {
      if (ctx.signal.aborted) throw abortErrorOf(ctx.signal);
      const message = error instanceof ToolError ? error.message : `tool ${name} failed`;
      record(false, message);
      return `error: ${message}`;
    }
  }

  for (let iteration = 1; ; iteration++) {
    const offer = iteration < maxIterations && records.length < maxToolCalls && offered.size > 0;
    ctx.phase(`iteration ${iteration}`);
    const response = await call(target, {
      messages,
      ...(offer ? { tools: [...offered.values()] } : {}),
      ...(schema ? { responseSchema: { name: 'response', schema } } : {}),
      ...(config.reasoningEffort ? { reasoningEffort: config.reasoningEffort } : {}),
    });
    usages.push(response.usage);
    if (response.reasoning) reasoning.push(response.reasoning);
    const wantsTools = response.toolCalls.length > 0;
    if (wantsTools && !offer) {
      if (stripThinking(response.text).trim() === '') {
        throw llmFailed(`the agent was still calling tools when its budget ran out (maxIterations ${maxIterations}, maxToolCalls ${maxToolCalls})`);
      }
    } else if (wantsTools) {
      messages.push({ role: 'assistant', content: response.text || null, toolCalls: response.toolCalls });
      for (const call of response.toolCalls) {
        const content = records.length < maxToolCalls ? await runTool(call) : 'error: the tool call budget is spent; answer now';
        messages.push({ role: 'tool', toolCallId: call.id, content });
      }
      continue;
    }
    const usage = sumUsage(usages);
    const json = readJsonAnswer(response.text, schema, response.usage.finishReason);
    return {
      text: stripThinking(response.text),
      json,
      usage: usageJson(usage),
      toolCalls: records as unknown as Json,
      ...(reasoning.length > 0 ? { reasoning: reasoning.join('\n\n') } : {}),
      ...(saved ? { agent: { id: saved.id, version: saved.version } } : {}),
      ...attached.output,
    };
  }
}
