import { describe, expect, it } from 'vitest';
import { haveReference, reference } from './reference-fixtures';
import { graphFromLongNames, layoutTree, NODE_BOTTLENECK, NODE_CRITICAL, textOnlyTable, tfDataModel } from './tf-data';

describe.skipIf(!haveReference)('tf.data bottleneck analysis on reference payloads', () => {
  it('does not say "no tf.data activity" above device pipelines and their graph', () => {
    const model = tfDataModel(reference('gpu_multi_worker', 'tf_data_bottleneck_analysis.json'));
    expect(model.graphs.length).toBeGreaterThan(0);
    expect(model.summary).not.toMatch(/No tf\.data activity/);
    expect(model.summary).toMatch(/^tf\.data activity was captured in 2 device input pipelines \(4 calls, 2 slower than 50 us\)/);
  });

  it('builds the iterator graph with the bottleneck under its parent', () => {
    const model = tfDataModel(reference('tf_keras2_fit', 'tf_data_bottleneck_analysis.json'));
    expect(model.inputBound).toBe(true);
    expect(model.summary).toMatch(/slower than 50 us/);
    expect(model.graphs.map((g) => g.key)[0]).toBe('vm · Host:0 · #0');
    const nodes = model.graphs[0].nodes;
    const byName = Object.fromEntries(nodes.map((n) => [n.name, n]));
    expect(byName.Root.type).toBe(NODE_CRITICAL);
    expect(byName.MapAndBatch.type).toBe(NODE_BOTTLENECK);
    expect(byName.MapAndBatch.parent).toBe(byName.Prefetch.id);
    expect(byName.Prefetch.details).toContain('Self Duration: 621 us');
    const layout = layoutTree(nodes);
    expect(layout.edges).toHaveLength(2);
    expect(layout.edges.every((e) => e.critical)).toBe(true);
  });

  it('never keeps HTML in the bottleneck table', () => {
    const model = tfDataModel(reference('tf_keras2_fit', 'tf_data_bottleneck_analysis.json'));
    const text = JSON.stringify(textOnlyTable(model.bottlenecks!).rows);
    expect(text).not.toMatch(/<[a-z]/i);
    expect(text).toContain('Iterator::Root::Prefetch::MapAndBatch');
  });

  it('handles a profile without tf.data activity', () => {
    const model = tfDataModel(reference('jax_cpu_train', 'tf_data_bottleneck_analysis.json'));
    expect(model.graphs).toEqual([]);
    expect(model.inputBound).toBe(false);
  });
});

describe('tree from long names', () => {
  it('reconstructs parents and marks the path to the bottleneck', () => {
    const nodes = graphFromLongNames(
      ['Iterator::Root::Prefetch::Map', 'Iterator::Root::Prefetch::Map::TensorSlice', 'Iterator::Root::Prefetch'],
      'Iterator::Root::Prefetch::Map',
    );
    const byName = Object.fromEntries(nodes.map((n) => [n.name, n]));
    expect(byName.Map.parent).toBe('Iterator::Root::Prefetch');
    expect(byName.Map.type).toBe(NODE_BOTTLENECK);
    expect(byName.Prefetch.type).toBe(NODE_CRITICAL);
    expect(byName.TensorSlice.type).toBe(0);
    const layout = layoutTree(nodes);
    expect(layout.nodes.find((n) => n.name === 'Iterator')!.depth).toBe(0);
    expect(layout.nodes.find((n) => n.name === 'TensorSlice')!.depth).toBe(4);
  });
});
