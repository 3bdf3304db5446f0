import { describe, expect, it } from 'vitest';
import { INPUT_RED } from './chart-models';
import { podDiagnostics, podStepModel, podSteps, type PodViewerPayload } from './pod-viewer';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('pod viewer on reference payloads', () => {
  it('stacks the breakdown of each core of a two-host step', () => {
    const payload = reference('jax_two_hosts', 'pod_viewer.json') as PodViewerPayload;
    const model = podStepModel(payload, 0)!;
    expect(model.stepNum).toBe(0);
    expect(model.cores.map((c) => c.coreId)).toEqual(['1', '1001']);
    expect(model.cores[0].totalMs).toBeCloseTo(3.298746);
    expect(model.cores[0].parts[0].name).toBe('Host compute');
    expect(model.cores[0].parts[0].ms).toBeCloseTo(3.229868, 6);
    expect(model.chart.series.map((s) => s.name)).toEqual(['Host compute', 'All others']);
  });

  it('colours input time red', () => {
    const payload = reference('tf_keras2_fit', 'pod_viewer.json') as PodViewerPayload;
    expect(podSteps(payload)).toHaveLength(4);
    const model = podStepModel(payload, 3)!;
    expect(model.stepNum).toBe(4);
    expect(model.chart.series.find((s) => s.name === 'Input')!.color).toBe(INPUT_RED);
    expect(model.cores[0].bottleneck).toBe('Input');
    expect(podDiagnostics(payload)).toEqual([]);
  });

  it('returns null past the last step', () => {
    const payload = reference('tf_idle_capture', 'pod_viewer.json') as PodViewerPayload;
    expect(podStepModel(payload, 99)).toBeNull();
  });
});
