/**
 * Pure resolution of a Tool node's call from its config and input document
 * (CONTRACT §2 Tool): `arguments` rendered as templates over the input document (a string
 * that is exactly one placeholder keeps the JSON type it names), merged with
 * `argumentBindings`, each a dot path into the input document; bindings win over arguments
 * of the same name. A binding whose path resolves to nothing, or an argument template that
 * cannot be rendered, fails the attempt ValidationFailed.
 */
import { z } from 'zod';
import { DEFAULT_TEMPLATE_LIMITS, renderConfigMember, templateScope, type InputDocument, type Json, type JsonObject, type TemplateLimits } from '@flowline/graph';
import { jsonSchema } from '@flowline/queue';
import { resolveDotPath, toolInvalid } from '@flowline/tools';

const toolConfigSchema = z.object({
  toolName: z.string().min(1),
  arguments: z.record(z.string(), jsonSchema).nullish(),
  argumentBindings: z.record(z.string(), z.string()).nullish(),
  allowedUrls: z.array(z.string()).nullish(),
});

/** What the worker hands the registry. */
export interface ToolCall {
  toolName: string;
  args: JsonObject;
  allowedUrls: string[];
}

/**
 * `nodeKey` names the node in a template failure (`nodes.<key>.config.arguments.<name>: …`).
 * @throws ToolError ValidationFailed on a malformed config, an argument template that cannot
 * be rendered or an unresolved binding
 */
export function resolveToolCall(config: JsonObject, input: InputDocument, nodeKey: string, limits: TemplateLimits = DEFAULT_TEMPLATE_LIMITS): ToolCall {
  const parsed = toolConfigSchema.safeParse(config);
  if (!parsed.success) {
    const members = [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.') || '(config)'))];
    throw toolInvalid(`Tool node config is invalid at ${members.join(', ')}`);
  }
  const { toolName, argumentBindings, allowedUrls } = parsed.data;
  const rendered = renderConfigMember(nodeKey, 'arguments', (parsed.data.arguments ?? {}) as JsonObject, templateScope(input), limits);
  if ('error' in rendered) throw toolInvalid(rendered.error);
  const args: JsonObject = { ...(rendered.value as JsonObject) };
  const document = input as unknown as Json;
  for (const [name, path] of Object.entries(argumentBindings ?? {})) {
    const lookup = resolveDotPath(document, path);
    if (!lookup.found) throw toolInvalid(`argument binding "${name}" (path ${path}) resolves to nothing in the input document`);
    args[name] = lookup.value;
  }
  return { toolName, args, allowedUrls: allowedUrls ?? [] };
}
