import { describe, expect, it } from 'vitest';
import type { Json } from '../model';
import { edge, graphOf, node, ok, rowOf, snapshotOf, step, withResult } from './test-kit';

/** start → t (Tool) → e (End with `outputTemplate`), the Tool answering `toolOutput`. */
function endAfterTool(outputTemplate: Json, toolOutput: Json, options = {}) {
  const g = graphOf([node('s', 'Start'), node('t', 'Tool'), node('e', 'End', { config: { outcome: 'ok', outputTemplate } })], [edge('st', 's', 't'), edge('te', 't', 'e')]);
  const first = step(snapshotOf(g, { topic: 'tides' }), 100, options).snap;
  return step(withResult(first, 't', ok(toolOutput)), 200, options).snap;
}

describe('an End with outputTemplate', () => {
  it('gives the run its rendered output when it settles', () => {
    const snap = endAfterTool('{{ run.input.topic }}: {{ upstream.t.output.result.text }}', { result: { text: 'high at noon' } });
    expect(snap.run.status).toBe('Completed');
    expect(rowOf(snap, 'e').output?.output).toEqual({ outcome: 'ok', result: 'tides: high at noon' });
  });

  it('keeps the JSON type of a single placeholder and renders objects member by member', () => {
    const typed = endAfterTool('{{ input.output.result.ids }}', { result: { ids: [1, 2] } });
    expect(rowOf(typed, 'e').output?.output).toEqual({ outcome: 'ok', result: [1, 2] });
    const shaped = endAfterTool({ ids: '{{ input.output.result.ids }}', about: 'on {{ run.input.topic }}', n: 7 }, { result: { ids: [3] } });
    expect(rowOf(shaped, 'e').output?.output).toEqual({ outcome: 'ok', result: { ids: [3], about: 'on tides', n: 7 } });
  });

  it('fails the End ValidationFailed, keyed to the member, when the template names a missing value', () => {
    const snap = endAfterTool({ text: '{{ input.output.result.missing }}' }, { result: {} });
    expect(rowOf(snap, 'e')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(snap, 'e').reason).toMatch(/^nodes\.e\.config\.outputTemplate\.text: undefined variable: input\.output\.result\.missing/);
    expect(snap.run).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
  });

  it('fails the End when the rendered result is over MAX_TEMPLATE_OUTPUT_BYTES', () => {
    const snap = endAfterTool('{% for i in (1..100) %}{{ input.output.result }}{% endfor %}', { result: 'x'.repeat(50) }, { maxTemplateOutputBytes: 1024 });
    expect(rowOf(snap, 'e')).toMatchObject({ status: 'Failed', failureClass: 'ValidationFailed' });
    expect(rowOf(snap, 'e').reason).toMatch(/over 1024 UTF-8 bytes \(MAX_TEMPLATE_OUTPUT_BYTES\)/);
  });
});
