import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputDocument, Json } from '../model';
import { parseGraph } from '../parse/parse-graph';
import { BUILTIN_TOOLS } from '../parse/fixtures/canonical-eight';
import { checkTemplateText } from './check';
import { renderString, renderTemplateValue, templateScope, type TemplateLimits } from './render';

const LIMITS: TemplateLimits = { maxOutputBytes: 4096, renderLimitMs: 200 };

/** Template text assembled from the pieces templates are made of, sound or broken. */
const fragment = fc.oneof(
  fc.constantFrom(
    '{{', '}}', '{%', '%}', '{{ ', ' }}', '{%- ', ' -%}', '|', ':', ',', '.', '[0]', '["a"]', ' ', '\n',
    'input', 'state', 'upstream', 'run', 'input.output', 'run.input', 'state.ids', 'upstream.a.output', 'nope', 'constructor', '__proto__',
    'size', 'json', 'default: "d"', 'plus: 1', 'divided_by: 0', 'join: ","', 'sample', 'date: "%Y"', '"now"', 'upcase', 'append: "x"',
    'if', 'endif', 'for x in input.output', 'endfor', 'assign y = run.input', 'capture c', 'endcapture', 'increment n', 'include "f"',
    'raw', 'endraw', 'comment', 'endcomment', '(1..5)', '(1..99999999)', 'forloop.index', 'x', 'y', 'else', 'unless', 'case', 'when 1',
  ),
  fc.string({ maxLength: 6 }),
);
const templateText = fc.array(fragment, { maxLength: 14 }).map((parts) => parts.join(''));

const envelope = (output: Json) => ({ status: 'succeeded' as const, attempt: 1, branch: null, output });
const documentArb: fc.Arbitrary<InputDocument> = fc
  .record({ runInput: fc.jsonValue(), out: fc.jsonValue(), state: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue()), withState: fc.boolean() })
  .map(({ runInput, out, state, withState }) => ({
    run: { input: runInput as Json },
    upstream: { a: envelope(out as Json) },
    input: envelope(out as Json),
    ...(withState ? { state: state as Record<string, Json> } : {}),
  }));

const isJsonText = (v: unknown): boolean => JSON.stringify(v) !== undefined && JSON.stringify(JSON.parse(JSON.stringify(v))) === JSON.stringify(v);

describe('templates never throw', () => {
  it('rendering any text over any document gives a JSON value within the cap, or an error message', () => {
    fc.assert(
      fc.property(templateText, documentArb, (text, doc) => {
        const r = renderString(text, templateScope(doc), LIMITS);
        if ('error' in r) {
          expect(typeof r.error).toBe('string');
          expect(r.error.length).toBeGreaterThan(0);
        } else {
          expect(isJsonText(r.value)).toBe(true);
          if (typeof r.value === 'string' && !(text.includes('{{') || text.includes('{%'))) expect(r.value).toBe(text);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('rendering any JSON value member by member gives a value or a failure with its place', () => {
    const valueArb = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string({ maxLength: 4 }), templateText), fc.array(templateText, { maxLength: 4 }));
    fc.assert(
      fc.property(valueArb, documentArb, (value, doc) => {
        const r = renderTemplateValue(value as Json, templateScope(doc), LIMITS);
        if (r.ok) expect(isJsonText(r.value)).toBe(true);
        else expect(Array.isArray(r.path) && typeof r.error === 'string').toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('judging any text, or a graph holding it in every template member, gives keyed errors or none', () => {
    fc.assert(
      fc.property(templateText, fc.boolean(), (text, withSchema) => {
        const r = checkTemplateText(text, { stateKeys: withSchema ? new Set(['ids']) : null, nodeKeys: new Set(['a']) });
        expect(r === null || typeof r === 'string').toBe(true);
        const graph = {
          nodes: [
            { key: 'a', kind: 'Start' },
            { key: 'llm', kind: 'LlmCall', config: { prompt: `p ${text}`, systemPrompt: text } },
            { key: 'tool', kind: 'Tool', config: { toolName: 'echo', arguments: { v: text, list: [text] } } },
            { key: 'end', kind: 'End', config: { outcome: 'ok', outputTemplate: { t: text } } },
          ],
          edges: [
            { key: 'e1', from: 'a', to: 'llm' },
            { key: 'e2', from: 'llm', to: 'tool' },
            { key: 'e3', from: 'tool', to: 'end' },
          ],
        };
        const parsed = parseGraph(graph, { maxNodes: 200, tools: BUILTIN_TOOLS });
        if (!parsed.ok) for (const e of parsed.errors) expect(['llm', 'tool', 'end']).toContain(e.key);
        expect(parsed.ok).toBe(r === null);
      }),
      { numRuns: 300 },
    );
  });
});
