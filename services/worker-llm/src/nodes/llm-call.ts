/**
 * LlmCall (CONTRACT §2, reference §4.2a): one chat completion. Messages: the optional
 * system prompt; then the prompt, the named `inputBindings` data block and, for a
 * node with `includeAttachments: true` on a run whose input carries attachments, the
 * `## Attachments` section (attachment-resolver.ts); for a steered row, the final
 * `## Operator steering` section. Bindings resolve before any inference. Output
 * `{ text, json, usage, attachmentsSkipped? }`.
 */
import type { Json } from '@flowline/graph';
import { nodeAttachments, withImages } from '../attachment-resolver';
import { dataBlock, joinParts, resolveBindings, steeringSection } from '../prompt';
import { renderPromptText } from '../templates';
import type { LlmMessage } from '../providers/types';
import { readJsonAnswer, stripThinking, usageJson } from './answer';
import { llmCallConfigSchema, readConfig, toSampling } from './config';
import type { NodeContext } from './context';

/** Runs an LlmCall node; returns its output document. */
export async function runLlmCall(ctx: NodeContext): Promise<Json> {
  const config = readConfig(llmCallConfigSchema, 'LlmCall', ctx.item.config);
  const systemPrompt = config.systemPrompt ? renderPromptText(ctx.item, 'systemPrompt', config.systemPrompt, ctx.templates) : null;
  const prompt = renderPromptText(ctx.item, 'prompt', config.prompt, ctx.templates);
  const data = resolveBindings(config.inputBindings, ctx.item.input);
  const target = await ctx.resolveModel(config.model);
  const attached = await nodeAttachments(ctx, config.includeAttachments);
  const messages: LlmMessage[] = [];
  if (systemPrompt) messages.push({ role: 'system', content: systemPrompt });
  messages.push({
    role: 'user',
    content: joinParts(
      prompt,
      data ? dataBlock('Input data', data, ctx.maxInputBytes) : null,
      attached.section,
      steeringSection(ctx.item.steering),
    ),
    ...(attached.images.length > 0 ? { images: attached.images.map((i) => ({ dataUrl: i.dataUrl })) } : {}),
  });
  const schema = config.responseJsonSchema ?? null;
  const call = withImages(target, attached.images, ctx.item.nodeKey, ctx.call.bind(ctx));
  const response = await call(target, {
    messages,
    ...(schema ? { responseSchema: { name: 'response', schema } } : {}),
    ...(config.reasoningEffort ? { reasoningEffort: config.reasoningEffort } : {}),
    sampling: toSampling(config.samplingOptions),
  });
  const json = readJsonAnswer(response.text, schema, response.usage.finishReason);
  return { text: stripThinking(response.text), json, usage: usageJson(response.usage), ...attached.output };
}
