import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_LIMITS, type WorkItem } from '@flowline/graph';
import { LlmError } from './errors';
import { renderPromptText } from './templates';

const item = {
  lane: 'llm',
  runId: 'r',
  nodeKey: 'summarise',
  kind: 'LlmCall',
  invocationId: 'i',
  attempt: 1,
  config: {},
  input: { run: { input: { topic: 'tides', ids: [1, 2] } }, upstream: {}, input: null },
  deadlineAt: 0,
  steering: [],
  outputSchema: null,
} satisfies WorkItem;

describe('renderPromptText', () => {
  it('sends text without {{ or {% byte for byte, braces and all', () => {
    const text = 'Reply as JSON: { "a": { "b": 1 } }\n\t  trailing  ';
    expect(renderPromptText(item, 'prompt', text, DEFAULT_TEMPLATE_LIMITS)).toBe(text);
  });

  it('renders placeholders, and a lone placeholder naming a non-string as its JSON', () => {
    expect(renderPromptText(item, 'prompt', 'About {{ run.input.topic }}.', DEFAULT_TEMPLATE_LIMITS)).toBe('About tides.');
    expect(renderPromptText(item, 'prompt', '{{ run.input.ids }}', DEFAULT_TEMPLATE_LIMITS)).toBe('[1,2]');
  });

  it('fails ValidationFailed naming the node member when the template cannot be rendered', () => {
    let error: unknown;
    try {
      renderPromptText(item, 'systemPrompt', '{{ run.input.nope }}', DEFAULT_TEMPLATE_LIMITS);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).failureClass).toBe('ValidationFailed');
    expect((error as LlmError).message).toMatch(/^nodes\.summarise\.config\.systemPrompt: undefined variable: run\.input\.nope/);
  });
});
