import { describe, expect, it } from 'vitest';
import { inputPipelineModel } from './input-pipeline';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('input pipeline model on reference payloads', () => {
  it('reads the verdict, steps, host breakdown and input ops of tf_keras2_fit', () => {
    const model = inputPipelineModel(reference('tf_keras2_fit', 'input_pipeline_analyzer.json'));
    expect(model.stepTime!.conclusion).toMatch(/HIGHLY input-bound/);
    expect(model.stepTime!.steps).toBe(4);
    expect(model.stepTime!.averageMs).toBeCloseTo(99.9);
    expect(model.hostBreakdown.slices.map((s) => s.name)).toEqual(['Data preprocessing']);
    expect(model.hostBreakdown.slices[0].value).toBeCloseTo(966.661016, 6);
    expect(model.inputOps!.rows[0].c[0]!.v).toBe('Iterator::Root::Prefetch::MapAndBatch');
    expect(model.inputOpsIndex).toBe(2);
    // Upstream's "(as % of total input-processing time)" columns hold fractions: shown as %.
    const percent = model.inputOps!.cols.findIndex((c) => c.id === 'timeInPercent');
    expect(model.inputOps!.cols[percent].label).toBe('Total time (% of input time)');
    expect(model.inputOps!.rows[0].c[percent]!.v).toBe(50.695);
    expect(model.recommendations).toHaveLength(5);
  });

  it('handles a profile without steps', () => {
    const model = inputPipelineModel(reference('tf_keras_fit', 'input_pipeline_analyzer.json'));
    expect(model.stepTime?.steps ?? 0).toBe(0);
  });

  it('handles every fixture without throwing', () => {
    for (const fixture of ['jax_cpu_train', 'gpu_multi_worker', 'tf_idle_capture', 'jax_two_hosts', 'tf_memory']) {
      expect(() => inputPipelineModel(reference(fixture, 'input_pipeline_analyzer.json'))).not.toThrow();
    }
  });
});
