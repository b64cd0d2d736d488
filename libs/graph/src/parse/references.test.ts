import { describe, expect, it } from 'vitest';
import type { Issue } from '../model';
import { definitionReferences, parseGraph } from './parse-graph';
import { OPTS, around, errorsOf } from './fixtures/builders';

const judged = (doc: unknown, definitions: string[]): Issue[] => {
  const r = parseGraph(doc, { ...OPTS, definitions: new Set(definitions) });
  return r.ok ? [] : r.errors;
};

const CHILD = '6f1c2a1e-0b7c-4c55-9d8e-2f1a3b4c5d6e';
const sub = (definitionId: string | number) => around({ kind: 'Subworkflow', config: { definitionId } });
const loop = (body: string) => around({ kind: 'Loop', config: { body, maxIterations: 3 } });

describe('dangling definition references', () => {
  it('refuses a Subworkflow naming a definition that is not among the existing ones, keyed to the node', () => {
    expect(judged(sub('x'), [CHILD])).toEqual([
      { key: 'work', message: "Subworkflow 'work': unknown definition 'x' (not found in this tenant)" },
    ]);
  });

  it('refuses a Loop whose body names no existing definition', () => {
    expect(judged(loop(CHILD), [])).toEqual([
      { key: 'work', message: `Loop 'work': unknown definition '${CHILD}' (not found in this tenant)` },
    ]);
  });

  it('accepts an existing definition whatever the case of its id, and judges no reference without the option', () => {
    expect(judged(sub(CHILD.toUpperCase()), [CHILD])).toEqual([]);
    expect(judged(loop(CHILD), [CHILD])).toEqual([]);
    expect(errorsOf(sub('x'))).toEqual([]);
  });

  it('adds no reference error to a reference that is already a type error', () => {
    expect(judged(sub(5), []).map((e) => e.message)).not.toContainEqual(expect.stringMatching(/unknown definition/));
  });
});

describe('definitionReferences', () => {
  it('lists each Subworkflow and Loop reference of a raw document once, as written', () => {
    const doc = {
      nodes: [
        { key: 'a', kind: 'Subworkflow', config: { definitionId: CHILD } },
        { key: 'b', kind: 'Loop', config: { body: 'other', maxIterations: 2 } },
        { key: 'c', kind: 'Subworkflow', config: { definitionId: CHILD } },
        { key: 'd', kind: 'Subworkflow', config: { definitionId: 7 } },
        { key: 'e', kind: 'Tool', config: { definitionId: 'not-a-reference' } },
        null,
      ],
    };
    expect(definitionReferences(doc)).toEqual([CHILD, 'other']);
  });

  it('reads nothing from documents that are not graphs', () => {
    for (const doc of [null, 5, 'x', [], { nodes: 'no' }, { nodes: [{ kind: 'Loop', config: 'no' }] }]) expect(definitionReferences(doc)).toEqual([]);
  });
});
