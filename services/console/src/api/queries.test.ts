/** The run detail's structural sharing: the pinned graph is kept by hash, the rest shared where equal. */
import { describe, expect, it } from 'vitest';
import { shareRunDetail } from './queries';

const detail = (status: string, graphHash = 'h1') => ({
  run: { id: 'r', status, graphHash },
  nodeRuns: [
    { nodeKey: 'a', status: 'Succeeded' },
    { nodeKey: 'b', status },
  ],
  output: null,
  graph: { nodes: [{ key: 'a' }, { key: 'b' }], edges: [] },
});

describe('shareRunDetail', () => {
  it('answers the previous object itself when nothing changed', () => {
    const prev = detail('Running');
    expect(shareRunDetail(prev, detail('Running'))).toBe(prev);
  });

  it('keeps the previous graph and the unchanged node runs, and takes what changed', () => {
    const prev = detail('Running');
    const next = shareRunDetail(prev, detail('Succeeded')) as ReturnType<typeof detail>;
    expect(next).not.toBe(prev);
    expect(next.graph).toBe(prev.graph);
    expect(next.nodeRuns[0]).toBe(prev.nodeRuns[0]);
    expect(next.nodeRuns[1]).toEqual({ nodeKey: 'b', status: 'Succeeded' });
    expect(next.run.status).toBe('Succeeded');
  });

  it('takes a new graph when its hash differs, and anything on the first read', () => {
    const prev = detail('Running');
    const other = { ...detail('Running', 'h2'), graph: { nodes: [{ key: 'a' }], edges: [] } };
    expect((shareRunDetail(prev, other) as ReturnType<typeof detail>).graph).toEqual(other.graph);
    expect((shareRunDetail(prev, other) as ReturnType<typeof detail>).graph).not.toBe(prev.graph);
    const first = detail('Running');
    expect(shareRunDetail(undefined, first)).toBe(first);
  });
});
