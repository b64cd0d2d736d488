/**
 * Pure resolution of a Tool node's call from its config and input document
 * (CONTRACT §2 Tool): `arguments` literals merged with `argumentBindings`, each a dot
 * path into the input document; bindings win over literals of the same name, and a
 * binding whose path resolves to nothing fails the attempt ValidationFailed.
 */
import { z } from 'zod';
import type { InputDocument, Json, JsonObject } from '@flowline/graph';
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
 * @throws ToolError ValidationFailed on a malformed config or an unresolved binding
 */
export function resolveToolCall(config: JsonObject, input: InputDocument): ToolCall {
  const parsed = toolConfigSchema.safeParse(config);
  if (!parsed.success) {
    const members = [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.') || '(config)'))];
    throw toolInvalid(`Tool node config is invalid at ${members.join(', ')}`);
  }
  const { toolName, argumentBindings, allowedUrls } = parsed.data;
  const args: JsonObject = { ...((parsed.data.arguments ?? {}) as JsonObject) };
  const document = input as unknown as Json;
  for (const [name, path] of Object.entries(argumentBindings ?? {})) {
    const lookup = resolveDotPath(document, path);
    if (!lookup.found) throw toolInvalid(`argument binding "${name}" (path ${path}) resolves to nothing in the input document`);
    args[name] = lookup.value;
  }
  return { toolName, args, allowedUrls: allowedUrls ?? [] };
}
