import { describe, expect, it } from 'vitest';
import { parseEditorSearch, sameEdited } from './search';

describe('the editor URL', () => {
  it('reads the definition, an old version or a restore of one, the selection and the panel', () => {
    expect(parseEditorSearch({ definitionId: 'd1', version: '3', node: 'echo', panel: 'versions' })).toEqual({
      definitionId: 'd1',
      version: 3,
      node: 'echo',
      panel: 'versions',
    });
    expect(parseEditorSearch({ definitionId: 'd1', restore: 2, edge: 'a-b', panel: 'json' })).toEqual({ definitionId: 'd1', restore: 2, edge: 'a-b', panel: 'json' });
  });

  it('drops what names nothing: a version without a definition, a version that is not a positive integer, an unknown panel, an edge beside a node', () => {
    expect(parseEditorSearch({ version: '3' })).toEqual({});
    for (const version of ['0', '-1', '1.5', '01', 'two', '99999999999']) expect(parseEditorSearch({ definitionId: 'd1', version })).toEqual({ definitionId: 'd1' });
    expect(parseEditorSearch({ new: 'x', panel: 'inspector' })).toEqual({ new: 'x' });
    expect(parseEditorSearch({ sample: 's', node: 'n', edge: 'e' })).toEqual({ sample: 's', node: 'n' });
    expect(parseEditorSearch({ definitionId: 'd1', version: '2', restore: '1' })).toEqual({ definitionId: 'd1', version: 2 });
  });

  it('reads two versions to compare only together and only for a definition', () => {
    expect(parseEditorSearch({ definitionId: 'd1', diffFrom: '2', diffTo: '5', panel: 'versions' })).toEqual({ definitionId: 'd1', diffFrom: 2, diffTo: 5, panel: 'versions' });
    expect(parseEditorSearch({ definitionId: 'd1', diffFrom: '2' })).toEqual({ definitionId: 'd1' });
    expect(parseEditorSearch({ definitionId: 'd1', diffFrom: '0', diffTo: '1' })).toEqual({ definitionId: 'd1' });
    expect(parseEditorSearch({ sample: 's', diffFrom: '1', diffTo: '2' })).toEqual({ sample: 's' });
    expect(sameEdited({ definitionId: 'd1' }, { definitionId: 'd1', diffFrom: 1, diffTo: 2 })).toBe(true);
  });

  it('tells a change of what is edited from a change of selection or panel', () => {
    expect(sameEdited({ definitionId: 'd1' }, { definitionId: 'd1', node: 'n', panel: 'json' })).toBe(true);
    expect(sameEdited({ definitionId: 'd1' }, { definitionId: 'd1', version: 1 })).toBe(false);
    expect(sameEdited({ definitionId: 'd1', version: 1 }, { definitionId: 'd1', restore: 1 })).toBe(false);
    expect(sameEdited({ new: 'a' }, { new: 'b' })).toBe(false);
  });
});
