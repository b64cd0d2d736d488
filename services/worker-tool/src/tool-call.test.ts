import { describe, expect, it } from 'vitest';
import type { InputDocument } from '@flowline/graph';
import { ToolError } from '@flowline/tools';
import { warmUpItem } from '@flowline/queue';
import { resolveToolCall } from './tool-call';

const input: InputDocument = {
  run: { input: { city: 'Oslo' } },
  upstream: {},
  input: { status: 'succeeded', attempt: 1, branch: null, output: { url: 'https://x.example/a', n: 0 } },
};

function classOf(fn: () => unknown): string {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return e instanceof ToolError ? e.failureClass : 'untyped';
  }
}

describe('resolveToolCall', () => {
  it('merges literal arguments with bindings resolved from the input document, bindings winning', () => {
    const call = resolveToolCall(
      { toolName: 'echo', arguments: { url: 'literal', keep: true }, argumentBindings: { url: 'input.output.url', city: 'run.input.city' } },
      input,
      'call',
    );
    expect(call).toEqual({ toolName: 'echo', args: { url: 'https://x.example/a', keep: true, city: 'Oslo' }, allowedUrls: [] });
  });

  it('binds falsy values that exist', () => {
    expect(resolveToolCall({ toolName: 'echo', argumentBindings: { n: 'input.output.n' } }, input, 'call').args).toEqual({ n: 0 });
  });

  it('passes allowedUrls through', () => {
    expect(resolveToolCall({ toolName: 'http_fetch', allowedUrls: ['https://x.example/'] }, input, 'call').allowedUrls).toEqual(['https://x.example/']);
  });

  it('fails ValidationFailed when a binding path resolves to nothing', () => {
    expect(classOf(() => resolveToolCall({ toolName: 'echo', argumentBindings: { a: 'input.output.missing' } }, input, 'call'))).toBe('ValidationFailed');
  });

  it('renders argument templates, a lone placeholder keeping its JSON type, before bindings win', () => {
    const doc: InputDocument = { ...input, upstream: { search: { status: 'succeeded', attempt: 1, branch: null, output: { ids: [3, 4] } } } };
    const call = resolveToolCall(
      { toolName: 'echo', arguments: { ids: '{{ upstream.search.output.ids }}', q: 'in {{ run.input.city }}', n: '{{ input.output.url }}' }, argumentBindings: { n: 'input.output.n' } },
      doc,
      'call',
    );
    expect(call.args).toEqual({ ids: [3, 4], q: 'in Oslo', n: 0 });
  });

  it('fails ValidationFailed, naming the argument, when a template cannot be rendered', () => {
    let error: unknown;
    try {
      resolveToolCall({ toolName: 'echo', arguments: { a: { b: '{{ input.output.missing }}' } } }, input, 'call');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).failureClass).toBe('ValidationFailed');
    expect((error as ToolError).message).toMatch(/^nodes\.call\.config\.arguments\.a\.b: undefined variable: input\.output\.missing/);
  });

  it('fails ValidationFailed without a toolName', () => {
    expect(classOf(() => resolveToolCall({ arguments: {} }, input, 'call'))).toBe('ValidationFailed');
  });
});

describe('resolveToolCall at warm-up', () => {
  it("resolves the lane warm-up item's call: arguments rendered from its input document", () => {
    const item = warmUpItem('tool', 0);
    expect(resolveToolCall(item.config, item.input, item.nodeKey)).toEqual({ toolName: 'warm-up', args: { n: 1, text: 'in warm-up' }, allowedUrls: [] });
  });
});
