/**
 * One tool call of an Agent, checkpointed: a call its transcript already holds is not run
 * again (its recorded result is fed back); a call `toolApprovals` names parks the node until
 * a person decides (the request, then the decision, are transcript steps); any other call
 * runs with the idempotency key of the step that records it (`<runId>:<nodeKey>:<step>`).
 */
import { parseJson, stringifyJson, toolCallNeedsApproval, toolIdempotencyKey, type Json, type JsonObject, type ParkRequest, type ToolApprovalRule } from '@flowline/graph';
import { ToolError } from '@flowline/tools';
import { abortErrorOf } from '../errors';
import { cutToBytes, truncationMarker } from '../prompt';
import type { LlmToolCall } from '../providers/types';
import type { StepRecord, ToolCallRecord } from './agent';
import type { AgentTools } from './agent-tools';
import { transcriptDiverged, type Transcript } from './agent-transcript';
import type { NodeContext } from './context';

/** A tool result fed back to the model is cut to this many UTF-8 bytes (with the marker). */
export const TOOL_RESULT_MAX_BYTES = 16_384;
/** Arguments larger than this are not recorded in `toolCalls` (nor carried by a park request). */
export const RECORDED_ARGUMENTS_MAX_BYTES = 1_024;

/** What a recorded tool step holds. */
interface ToolStep {
  callId: string;
  name: string;
  arguments?: JsonObject;
  ok: boolean;
  error?: string;
  /** what the model was shown */
  content: string;
}

function parseArguments(raw: string): JsonObject | null {
  try {
    const value: unknown = parseJson(raw.trim() === '' ? '{}' : raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

function feedBackText(text: string): string {
  const cut = cutToBytes(text, TOOL_RESULT_MAX_BYTES);
  return cut.bytes < cut.totalBytes ? `${cut.text}\n${truncationMarker(cut.bytes, cut.totalBytes)}` : text;
}

const small = (args: JsonObject): boolean => Buffer.byteLength(stringifyJson(args), 'utf8') <= RECORDED_ARGUMENTS_MAX_BYTES;


/**
 * The runner of an Agent's tool calls: each answers the text fed back to the model, or the
 * request to park on when a person must approve the call first.
 */
export function toolStepRunner(
  ctx: NodeContext,
  tools: AgentTools,
  transcript: Transcript,
  rules: readonly ToolApprovalRule[],
  records: ToolCallRecord[],
  steps: StepRecord[],
): (call: LlmToolCall) => Promise<string | ParkRequest> {
  // decisions already consumed by this life's transcript: a decision applies to one request only
  const usedDecisions = new Set(transcript.recorded.filter((s) => s.kind === 'approval' && typeof s.payload['operationId'] === 'string').map((s) => s.payload['operationId'] as string));

  /** Records the call's outcome (or adopts the one stored first) and returns what the model is shown. */
  async function finish(entry: ToolStep): Promise<string> {
    const stored = await transcript.write('tool', entry as unknown as JsonObject);
    return adopt(stored.step, stored.payload as unknown as ToolStep);
  }

  function adopt(step: number, t: ToolStep): string {
    records.push({ name: t.name, ...(t.arguments ? { arguments: t.arguments } : {}), ok: t.ok, ...(t.error ? { error: t.error } : {}) });
    steps.push({ step, kind: 'tool', name: t.name, ok: t.ok });
    return t.content;
  }

  const outcome = (call: LlmToolCall, name: string, args: JsonObject | null, ok: boolean, content: string, error?: string): ToolStep => ({
    callId: call.id,
    name,
    ...(args && small(args) ? { arguments: args } : {}),
    ok,
    ...(error ? { error } : {}),
    content,
  });

  /** The approval gate of a call: the arguments to run it with, the refusal to feed back, or the request to park on. */
  async function approve(call: LlmToolCall, name: string, args: JsonObject): Promise<{ run: JsonObject } | { refused: string } | ParkRequest> {
    let asked = transcript.take('approval', (p) => p['phase'] === 'requested' && p['callId'] === call.id);
    if (!asked) {
      if (transcript.replaying) throw transcriptDiverged();
      const spec = [...tools.specs.values()].find((s) => tools.label(s.name) === name);
      asked = await transcript.write('approval', { phase: 'requested', callId: call.id, tool: name, arguments: args, inputSchema: (spec?.parameters ?? null) as Json });
      steps.push({ step: asked.step, kind: 'approval', name, phase: 'requested' });
      return park(name, args, asked.step);
    }
    steps.push({ step: asked.step, kind: 'approval', name, phase: 'requested' });
    let decided = transcript.take('approval', (p) => p['phase'] !== 'requested' && p['callId'] === call.id);
    if (!decided) {
      if (transcript.replaying) throw transcriptDiverged();
      const d = ctx.item.agent?.decision;
      if (!d || usedDecisions.has(d.operationId)) return park(name, args, asked.step);
      usedDecisions.add(d.operationId);
      const edited = d.payload !== null && typeof d.payload === 'object' && !Array.isArray(d.payload) ? d.payload['arguments'] : undefined;
      const runWith = edited !== null && typeof edited === 'object' && !Array.isArray(edited) && edited !== undefined ? edited : args;
      decided = await transcript.write('approval', {
        phase: d.decision === 'Approve' ? 'approved' : 'rejected',
        callId: call.id,
        tool: name,
        operationId: d.operationId,
        comment: d.comment,
        arguments: runWith,
      });
    }
    const p = decided.payload;
    steps.push({ step: decided.step, kind: 'approval', name, phase: String(p['phase']) });
    if (p['phase'] === 'rejected') {
      const comment = typeof p['comment'] === 'string' && p['comment'].trim() !== '' ? `: ${p['comment']}` : '';
      return { refused: `error: a person rejected this tool call${comment}` };
    }
    const runWith = p['arguments'];
    return { run: runWith !== null && typeof runWith === 'object' && !Array.isArray(runWith) ? runWith : args };
  }

  const park = (tool: string, args: JsonObject, step: number): ParkRequest => ({ kind: 'ToolCall', tool, arguments: small(args) ? args : null, step });

  /** Runs the call live under the idempotency key of the step that will record it. */
  async function invoke(name: string, args: JsonObject): Promise<{ ok: true; content: string } | { ok: false; error: string }> {
    const target = tools.target(nameToFunction(name))!;
    const step = transcript.nextStep;
    ctx.toolActivity(name);
    try {
      if (target.kind === 'mcp') return { ok: true, content: feedBackText(await tools.callMcp(target.ref, args, toolIdempotencyKey(ctx.item.runId, ctx.item.nodeKey, step))) };
      const result = await ctx.tools.invoke(target.name, args, {
        signal: ctx.signal,
        allowedUrls: [],
        runId: ctx.item.runId,
        nodeKey: ctx.item.nodeKey,
        attempt: ctx.item.attempt,
        invocationId: ctx.item.invocationId,
        input: ctx.item.input,
        agentCall: step,
        logger: ctx.logger,
      });
      return { ok: true, content: feedBackText(stringifyJson(result)) };
    } catch (error) {
      if (ctx.signal.aborted) throw abortErrorOf(ctx.signal);
      return { ok: false, error: error instanceof ToolError ? error.message : `tool ${name} failed` };
    }
  }

  // the offered function name of a label (labels are unique per offer)
  const byLabel = new Map([...tools.specs.keys()].map((fn) => [tools.label(fn), fn]));
  const nameToFunction = (name: string) => byLabel.get(name) ?? name;

  return async (call) => {
    const done = transcript.take('tool', (p) => p['callId'] === call.id);
    if (done) return adopt(done.step, done.payload as unknown as ToolStep);
    const name = tools.label(call.name);
    const args = parseArguments(call.arguments);
    if (transcript.replaying && !toolCallNeedsApproval(rules, name, args ?? {})) throw transcriptDiverged();
    if (tools.target(call.name) === undefined) {
      return finish(outcome(call, name, args, false, 'error: this tool is not offered', `tool ${call.name.slice(0, 64)} is not offered`));
    }
    if (args === null) return finish(outcome(call, name, null, false, 'error: the arguments are not a JSON object', 'the arguments are not a JSON object'));
    let runWith = args;
    if (toolCallNeedsApproval(rules, name, args)) {
      const gate = await approve(call, name, args);
      if ('kind' in gate) return gate;
      if ('refused' in gate) return finish(outcome(call, name, args, false, gate.refused, 'rejected by a person'));
      runWith = gate.run;
      // an approved call that ran before this invocation: its recorded result
      const ran = transcript.take('tool', (p) => p['callId'] === call.id);
      if (ran) return adopt(ran.step, ran.payload as unknown as ToolStep);
    }
    if (transcript.replaying) throw transcriptDiverged();
    const r = await invoke(name, runWith);
    return finish(r.ok ? outcome(call, name, runWith, true, r.content) : outcome(call, name, runWith, false, `error: ${r.error}`, r.error));
  };
}
