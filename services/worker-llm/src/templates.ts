/**
 * Templates in a model node's text members (`prompt`, `systemPrompt`, `instructions`,
 * `question`), rendered over the input document the job carries just before the node calls
 * its model. Text without `{{` / `{%` is returned untouched, so such prompts go out byte for
 * byte as written. A render that fails is the node's ValidationFailed, naming the member
 * (`nodes.<key>.config.prompt: …`), never a crash and never a retry.
 */
import { renderConfigMember, stringifyJson, templateScope, type TemplateLimits, type WorkItem } from '@flowline/graph';
import { llmInvalid } from './errors';

/**
 * `text` rendered for `item`; a template that is one placeholder naming a non-string value
 * reads as that value's JSON.
 * @throws LlmError ValidationFailed when the template cannot be rendered
 */
export function renderPromptText(item: WorkItem, member: string, text: string, limits: TemplateLimits): string {
  const r = renderConfigMember(item.nodeKey, member, text, templateScope(item.input), limits);
  if ('error' in r) throw llmInvalid(r.error);
  return typeof r.value === 'string' ? r.value : stringifyJson(r.value);
}
