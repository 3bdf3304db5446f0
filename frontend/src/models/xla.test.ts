import { describe, expect, it } from 'vitest';
import { layers, layout } from './graph-layout';
import { haveReference, reference } from './reference-fixtures';
import { childRows, memoryViewerModel, nodeAt, opOfBuffer, type MemoryViewerPayload, type OpNode } from './xla';

describe.skipIf(!haveReference)('memory viewer model (upstream reference)', () => {
  const payload = reference('jax_cpu_train', 'memory_viewer.jit_train_step(32).json') as MemoryViewerPayload;
  const model = memoryViewerModel(payload);

  it('marks the peak where the heap is largest', () => {
    const { heap, peakStep, peakMib } = model.heap;
    expect(Math.max(...heap)).toBeCloseTo(peakMib, 9);
    expect(heap[peakStep + 1] ?? heap[peakStep]).toBeCloseTo(peakMib, 9);
    expect(model.heap.steps).toHaveLength(heap.length);
  });

  it('lists the peak buffers largest first, in bars and table', () => {
    const sizes = model.peakBars.map((b) => b.sizeMib);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(model.peakTable.rows).toHaveLength(payload.maxHeapBySize!.length);
    expect(model.summary[0].value).toBe('17.63 MiB');
  });
});

describe('op profile tree', () => {
  const root: OpNode = {
    name: 'by_program',
    metrics: { rawTime: 4e9 },
    children: [
      { name: 'jit_f(1)', metrics: { rawTime: 3e9, occurrences: 3, rawFlops: 6e9 }, children: [{ name: 'dot', children: [{ name: 'dot.1', xla: { op: 'dot.1', module: 'jit_f(1)' } }] }] },
      { name: 'IDLE', metrics: { rawTime: 1e9 } },
    ],
  };

  it('walks a path and stops at the deepest existing node', () => {
    expect(nodeAt(root, ['jit_f(1)', 'dot']).node.name).toBe('dot');
    expect(nodeAt(root, ['jit_f(1)', 'nope', 'x']).path).toEqual(['jit_f(1)']);
  });

  it('gives each child its share and whether it is an op', () => {
    const rows = childRows(root, 4e9);
    expect(rows.map((r) => [r.name, r.timeMs, r.share])).toEqual([
      ['jit_f(1)', 3, 0.75],
      ['IDLE', 1, 0.25],
    ]);
    expect(childRows(nodeAt(root, ['jit_f(1)', 'dot']).node, 1)[0].isOp).toBe(true);
    // 6e9 FLOPs in 3 ms: 2,000 GFLOP/s; IDLE has none.
    expect(rows.map((r) => r.gflops)).toEqual([2000, 0]);
  });

  it('names the op behind a tuple-element buffer', () => {
    expect(opOfBuffer('wrapped_reduce-window.1{3}')).toBe('wrapped_reduce-window.1');
    expect(opOfBuffer('dot')).toBe('dot');
  });
});

describe('graph layout', () => {
  const edges = [
    { from: 'a', to: 'c' },
    { from: 'b', to: 'c' },
    { from: 'c', to: 'd' },
    { from: 'a', to: 'd' },
  ];

  it('puts every node below all its operands', () => {
    const layer = layers(['a', 'b', 'c', 'd'], edges);
    expect([...layer.entries()]).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 1],
      ['d', 2],
    ]);
  });

  it('places nodes without overlap inside the reported size', () => {
    const placed = layout(
      ['a', 'b', 'c', 'd'].map((id) => ({ id, width: 100, height: 30 })),
      edges,
    );
    const [a, b] = placed.nodes;
    expect(b.x).toBeGreaterThanOrEqual(a.x + a.width);
    for (const n of placed.nodes) {
      expect(n.x + n.width).toBeLessThanOrEqual(placed.width + 1e-9);
      expect(n.y + n.height).toBeLessThanOrEqual(placed.height + 1e-9);
    }
  });

  it('survives a cycle', () => {
    expect(layers(['x', 'y'], [{ from: 'x', to: 'y' }, { from: 'y', to: 'x' }]).size).toBe(2);
  });
});
