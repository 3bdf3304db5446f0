import { describe, expect, it } from 'vitest';
import { heapOption, roofLine } from '../charts/xla-options';
import { LIGHT_THEME } from '../charts/theme';
import { defaultModule } from '../views/xla-parts';
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

describe('xla charts', () => {
  it('bends the roof at the ridge point', () => {
    const roof = roofLine({ points: [{ name: 'a', intensity: 1, gflops: 5 }], peakGflops: 1000, peakGibS: 100 });
    expect(roof[1]).toEqual([10, 1000]);
    expect(roof[0][1]).toBeCloseTo(roof[0][0] * 100);
  });

  it('marks the peak after its step on the heap chart', () => {
    const option = heapOption({ steps: [0, 1, 2], heap: [1, 3, 2], unpadded: [1, 3, 2], ops: ['a', 'b', ''], peakStep: 0, peakMib: 3 }, LIGHT_THEME);
    const series = option.series as { markLine?: { data: { xAxis: number }[] } }[];
    expect(series[0].markLine?.data[0].xAxis).toBe(1);
  });
});

describe('default module', () => {
  it('prefers the URL, then the last compiled user program', () => {
    const modules = ['jit__normal(4)', 'jit_add(12)', 'jit_step(8)'];
    expect(defaultModule(modules, 'jit_step(8)')).toBe('jit_step(8)');
    expect(defaultModule(modules, 'gone(1)')).toBe('jit_add(12)');
    expect(defaultModule(['jit__normal(4)'])).toBe('jit__normal(4)');
    expect(defaultModule([])).toBe('');
  });
});
