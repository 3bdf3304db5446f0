import { describe, expect, it } from 'vitest';
import { drawing } from './hlo-graph';
import type { GraphPayload } from './xla';

const graph: GraphPayload = {
  module: 'm',
  computation: 'main',
  center: 'f',
  depth: 1,
  truncated: false,
  nodes: [
    { name: 'x', opcode: 'parameter', shape: 'f32[4]' },
    {
      name: 'f',
      opcode: 'fusion',
      shape: 'f32[4]',
      fusion: {
        computation: 'fc',
        size: 2,
        nodes: [
          { name: 'p', opcode: 'parameter', shape: 'f32[4]' },
          { name: 'n', opcode: 'negate', shape: 'f32[4]' },
        ],
        edges: [{ from: 'p', to: 'n' }],
      },
    },
  ],
  edges: [{ from: 'x', to: 'f' }],
};

describe('graph drawing', () => {
  it('draws operands above users and expands a fusion around its ops', () => {
    const closed = drawing(graph, new Set());
    const [x, f] = closed.nodes;
    expect(f.y).toBeGreaterThan(x.y + x.height);
    expect(f.center).toBe(true);
    expect(f.inner).toEqual([]);
    const open = drawing(graph, new Set(['f']));
    const g = open.nodes[1];
    expect(g.inner.map((q) => q.name)).toEqual(['p', 'n']);
    for (const q of g.inner) {
      expect(q.x).toBeGreaterThanOrEqual(g.x);
      expect(q.y + q.height).toBeLessThanOrEqual(g.y + g.height);
    }
    expect(g.innerEdges).toHaveLength(1);
    expect(open.edges[0].d.startsWith('M')).toBe(true);
  });
});
