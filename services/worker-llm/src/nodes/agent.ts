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
 * spent — offers no tools, so the model must answer; calls past `maxToolCallsPerTurn` in
 * one answer are answered with an error instead of run. Tool calls are recorded
 * `{ name, arguments?, ok, error? }` (arguments only when small; results never).
 *
 * The loop is checkpointed (agent-transcript.ts): each model answer, tool result, approval
 * and steering message is a transcript step in Postgres before the loop moves on, and a new
 * invocation of the node replays the steps of its life instead of asking or running them
 * again. A call `toolApprovals` names parks the node (agent-tool-step.ts). The output lists
 * the steps (`steps`), without prompt or result text.
 */
import { agentReferenceOf, memberNamed, mergeSavedAgent, NODE_KIND_SPECS, parseToolApprovals, type Json, type JsonObject } from '@flowline/graph';
import type { AgentStep } from '@flowline/db';
import { LaneAnswer } from '@flowline/queue';
import { nodeAttachments, withImages } from '../attachment-resolver';
import { llmFailed, llmInvalid } from '../errors';
import { conversationRequestSection, dataBlock, joinParts, steeringSection } from '../prompt';
import { renderPromptText } from '../templates';
import type { LlmMessage, LlmToolCall, LlmUsage } from '../providers/types';
import { toolStepRunner } from './agent-tool-step';
import { agentTools } from './agent-tools';
import { Transcript, transcriptDiverged } from './agent-transcript';
import { readJsonAnswer, stripThinking, sumUsage, usageJson } from './answer';
import { agentConfigSchema, readConfig } from './config';
import type { NodeContext, SavedAgentPin } from './context';

/** Model calls an Agent makes when `maxIterations` is not set (the default the graph reference states). */
export const DEFAULT_MAX_ITERATIONS = agentDefault('maxIterations');
/** Tool calls an Agent may make when `maxToolCalls` is not set (the default the graph reference states). */
export const DEFAULT_MAX_TOOL_CALLS = agentDefault('maxToolCalls');

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

/** One entry of the output's `steps`: what the transcript recorded, without prompt or result text. */
export interface StepRecord {
  step: number;
  kind: AgentStep['kind'];
  /** tool and approval steps: the tool */
  name?: string;
  /** tool steps: whether the call succeeded */
  ok?: boolean;
  /** model steps: how many tool calls the answer asked for */
  toolCalls?: number;
  /** approval steps: requested, approved or rejected */
  phase?: string;
}

/** A recorded model answer. */
interface ModelStep {
  text: string;
  reasoning: string | null;
  toolCalls: LlmToolCall[];
  usage: LlmUsage;
}

const modelStepOf = (p: JsonObject): ModelStep => p as unknown as ModelStep;

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

/**
 * Runs an Agent node; returns its output document (`agent: { id, version }` when it used a saved
 * agent), or parks it on a tool call a person must approve.
 */
export async function runAgent(ctx: NodeContext): Promise<Json | LaneAnswer> {
  const saved = await savedAgentOf(ctx);
  const config = readConfig(agentConfigSchema, 'Agent', saved ? mergeSavedAgent(saved.members, ctx.item.config) : ctx.item.config);
  const approvals = parseToolApprovals(config.toolApprovals ?? []);
  if (approvals.errors.length > 0) throw llmInvalid(`Agent node config is invalid: ${approvals.errors[0]}`);
  const instructions = renderPromptText(ctx.item, 'instructions', config.instructions, ctx.templates);
  const target = await ctx.resolveModel(config.model);
  const tools = await agentTools(ctx, config.tools ?? []);
  const offered = tools.specs;
  const maxIterations = config.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const maxToolCalls = config.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const maxPerTurn = config.maxToolCallsPerTurn ?? Number.POSITIVE_INFINITY;
  const schema = config.responseJsonSchema ?? null;
  const transcript = await Transcript.open(ctx.agentSteps, ctx.item, ctx.maxTranscriptBytes);
  const steps: StepRecord[] = [];
  const seedSteering = await openSteering(ctx, transcript, steps);
  const upstream = config.includeUpstreamOutputs === false ? null : dataBlock('Upstream outputs', ctx.item.input.upstream, ctx.maxInputBytes);
  // in a Chat graph the user's message is always shown, whatever includeUpstreamOutputs says
  const request = ctx.item.chat === true ? conversationRequestSection(ctx.item.input.run.input, ctx.maxInputBytes) : null;
  const attached = await nodeAttachments(ctx, config.includeAttachments);
  const messages: LlmMessage[] = [
    { role: 'system', content: AGENT_SYSTEM_PROMPT },
    {
      role: 'user',
      content: joinParts(instructions, request, upstream, attached.section, steeringSection(seedSteering)),
      ...(attached.images.length > 0 ? { images: attached.images.map((i) => ({ dataUrl: i.dataUrl })) } : {}),
    },
  ];
  const call = withImages(target, attached.images, ctx.item.nodeKey, ctx.call.bind(ctx));
  const records: ToolCallRecord[] = [];
  const usages: LlmUsage[] = [];
  // the model calls this invocation made (a resumed transcript's recorded ones were charged before)
  const live: LlmUsage[] = [];
  // what the model reasoned on each call, kept with the output (sealed with it when encryption is on)
  const reasoning: string[] = [];
  const runner = toolStepRunner(ctx, tools, transcript, approvals.rules, records, steps);

  /** The model's next answer: replayed from the transcript, else asked and recorded. */
  async function ask(offer: boolean, iteration: number): Promise<ModelStep> {
    await steeringBefore(ctx, transcript, messages, steps);
    let step = transcript.take('model');
    if (!step) {
      if (transcript.replaying) throw transcriptDiverged();
      ctx.phase(`iteration ${iteration}`);
      const response = await call(target, {
        messages,
        ...(offer ? { tools: [...offered.values()] } : {}),
        ...(schema ? { responseSchema: { name: 'response', schema } } : {}),
        ...(config.reasoningEffort ? { reasoningEffort: config.reasoningEffort } : {}),
      });
      live.push(response.usage);
      const answer: ModelStep = { text: response.text, reasoning: response.reasoning, toolCalls: response.toolCalls, usage: response.usage };
      step = await transcript.write('model', answer as unknown as JsonObject);
    }
    const answer = modelStepOf(step.payload);
    steps.push({ step: step.step, kind: 'model', toolCalls: answer.toolCalls.length });
    return answer;
  }

  for (let iteration = 1; ; iteration++) {
    const offer = iteration < maxIterations && records.length < maxToolCalls && offered.size > 0;
    const response = await ask(offer, iteration);
    usages.push(response.usage);
    if (response.reasoning) reasoning.push(response.reasoning);
    const wantsTools = response.toolCalls.length > 0;
    if (wantsTools && !offer) {
      if (stripThinking(response.text).trim() === '') {
        throw llmFailed(`the agent was still calling tools when its budget ran out (maxIterations ${maxIterations}, maxToolCalls ${maxToolCalls})`);
      }
    } else if (wantsTools) {
      messages.push({ role: 'assistant', content: response.text || null, toolCalls: response.toolCalls });
      for (const [i, toolCall] of response.toolCalls.entries()) {
        let content: string;
        if (records.length >= maxToolCalls) content = 'error: the tool call budget is spent; answer now';
        else if (i >= maxPerTurn) content = PER_TURN_LIMIT_RESULT;
        else {
          const done = await runner(toolCall);
          if (typeof done !== 'string') return LaneAnswer.park(done, usageJson(sumUsage(live)));
          content = done;
        }
        messages.push({ role: 'tool', toolCallId: toolCall.id, content });
      }
      continue;
    }
    const json = readJsonAnswer(response.text, schema, response.usage.finishReason);
    const output: JsonObject = {
      text: stripThinking(response.text),
      json,
      usage: usageJson(sumUsage(usages)),
      toolCalls: records as unknown as Json,
      steps: steps as unknown as Json,
      ...(reasoning.length > 0 ? { reasoning: reasoning.join('\n\n') } : {}),
      ...(saved ? { agent: { id: saved.id, version: saved.version } } : {}),
      ...attached.output,
    };
    // a resumed transcript's earlier answers were charged when their invocation reported
    return transcript.resumed ? LaneAnswer.output(output, usageJson(sumUsage(live))) : output;
  }
}

/** The result a call past `maxToolCallsPerTurn` gets. */
export const PER_TURN_LIMIT_RESULT = 'error: per-turn tool call limit reached';


/**
 * The steering shown in the seed prompt. A fresh transcript shows every applied message there
 * and records each as a `steer` step; a resumed one shows those it recorded so (replayed), and
 * later messages join the conversation before the next model call (`steeringBefore`).
 */
async function openSteering(ctx: NodeContext, transcript: Transcript, steps: StepRecord[]): Promise<string[]> {
  const seeded: string[] = [];
  if (!transcript.resumed) {
    for (const message of ctx.item.steering) {
      const s = await transcript.write('steer', { message, inSeed: true });
      steps.push({ step: s.step, kind: 'steer' });
      seeded.push(message);
    }
    return seeded;
  }
  for (let s = transcript.take('steer', (p) => p['inSeed'] === true); s; s = transcript.take('steer', (p) => p['inSeed'] === true)) {
    steps.push({ step: s.step, kind: 'steer' });
    seeded.push(String(s.payload['message']));
  }
  return seeded;
}

/** Steering recorded mid-conversation (replayed), then applied messages not yet recorded, as user messages before a model call. */
async function steeringBefore(ctx: NodeContext, transcript: Transcript, messages: LlmMessage[], steps: StepRecord[]): Promise<void> {
  for (let s = transcript.take('steer'); s; s = transcript.take('steer')) {
    steps.push({ step: s.step, kind: 'steer' });
    messages.push({ role: 'user', content: steeringSection([String(s.payload['message'])]) });
  }
  if (transcript.replaying) return;
  const recorded = steps.filter((s) => s.kind === 'steer').length;
  for (const message of ctx.item.steering.slice(recorded)) {
    const s = await transcript.write('steer', { message, inSeed: false });
    steps.push({ step: s.step, kind: 'steer' });
    messages.push({ role: 'user', content: steeringSection([message]) });
  }
}
