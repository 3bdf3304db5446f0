import { describe, expect, it } from 'vitest';
import { INPUT_RED } from './chart-models';
import { opStatsPies, opStatsTables, topOps, topOpsTable, filterOps } from './op-stats';
import { groupTips, overviewModel, toolOfTip } from './overview';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('overview model on reference payloads', () => {
  it('reads the summary, step graph and recommendation of tf_keras2_fit', () => {
    const model = overviewModel(reference('tf_keras2_fit', 'overview_page.json'), ['overview_page', 'trace_viewer', 'input_pipeline_analyzer']);
    expect(model.summary[0]).toMatchObject({ label: 'Average step time', value: '99.90 ms' });
    expect(model.stepTime!.steps).toBe(4);
    expect(model.stepTime!.chart.series.map((s) => s.name)).toEqual(['Host compute', 'Input', 'All others']);
    expect(model.stepTime!.chart.series.find((s) => s.name === 'Input')!.color).toBe(INPUT_RED);
    expect(model.statement).toMatch(/HIGHLY input-bound/);
    expect(model.tips.find((t) => t.text.startsWith('input_pipeline_analyzer'))!.tool).toBe('input_pipeline_analyzer');
    expect(model.tips.find((t) => t.text.startsWith('trace_viewer'))!.tool).toBe('trace_viewer');
    expect(groupTips(model.tips).map(([group]) => group)).toContain('Next steps for reducing the Host time');
    expect(model.environment.find((m) => m.label === 'Device type')!.value).toBe('CPU');
  });

  it('shows the 16/32-bit precision split of a GPU profile', () => {
    const model = overviewModel(reference('gpu_multi_worker', 'overview_page.json'));
    expect(model.summary.find((m) => m.label === 'Device compute precision')!.value).toBe('30.5% 16-bit · 69.5% 32-bit');
  });

  it('says n/a for device and MXU metrics of a CPU profile, and keeps host metrics', () => {
    const model = overviewModel(reference('tf_keras2_fit', 'overview_page.json'));
    const value = (label: string) => model.summary.find((m) => m.label === label)?.value;
    expect(value('Device duty cycle')).toBe('n/a');
    expect(value('MXU utilization')).toBe('n/a');
    expect(value('Host idle time')).toMatch(/%$/);
    const gpu = overviewModel(reference('gpu_multi_worker', 'overview_page.json'));
    expect(gpu.summary.find((m) => m.label === 'Ops placed on device')!.value).toBe('0.0%');
    expect(gpu.summary.find((m) => m.label === 'MXU utilization')!.value).toBe('n/a');
  });

  it('says n/a, and why, for TensorFlow-op shares of a profile without TensorFlow ops', () => {
    const jax = overviewModel(reference('jax_cpu_train', 'overview_page.json'));
    const host = jax.summary.find((m) => m.label === 'Ops placed on host')!;
    expect(host.value).toBe('n/a'); // upstream: 0.0% next to 6.9 s of XLA ops
    expect(host.hint).toMatch(/No TensorFlow op was recorded.*HLO stats/);
    expect(jax.summary.find((m) => m.label === 'Host op time eager')!.value).toBe('n/a');
    const tf = overviewModel(reference('tf_keras2_fit', 'overview_page.json'));
    expect(tf.summary.find((m) => m.label === 'Ops placed on host')!.value).toBe('100.0%');
  });

  it('recommends for the framework that made the profile', () => {
    const payload = structuredClone(reference('jax_cpu_train', 'overview_page.json')) as { cols: { id: string }[]; p?: Record<string, string> }[];
    const recommendation = payload.find((t) => t?.cols?.some((c) => c.id === 'tip_type'))!;
    recommendation.p = { ...recommendation.p, framework: 'JAX' };
    const jax = overviewModel(payload).tips.map((t) => t.text).join('\n');
    expect(jax).not.toMatch(/TF2|tensorflow\.org/);
    expect(jax).toMatch(/docs\.jax\.dev\/en\/latest\/profiling\.html/);
    recommendation.p.framework = 'TensorFlow';
    const tf = overviewModel(payload).tips;
    expect(tf.find((t) => /TF2 Profiler FAQ/.test(t.text))!.text).toMatch(/href="https:\/\/www\.tensorflow\.org\/guide\/profiler#faq"/);
    expect(tf.some((t) => /tensorflow\.org\/guide\/data_performance/.test(t.text))).toBe(true);
  });

  it('shows diagnostics of a profile without steps', () => {
    const model = overviewModel(reference('tf_keras_fit', 'overview_page.json'));
    expect(model.diagnostics[0].severity).toBe('WARNING');
    expect(model.stepTime!.steps).toBe(0);
  });

  it('finds the top host ops of framework_op_stats without IDLE', () => {
    const tables = opStatsTables(reference('tf_keras2_fit', 'framework_op_stats.json'));
    const ops = topOps(tables.withoutIdle, 10);
    expect(ops).toHaveLength(10);
    expect(ops[0]).toMatchObject({ side: 'Host', name: 'Iterator::Root::Prefetch::MapAndBatch' });
    expect(ops.every((op, i) => i === 0 || ops[i - 1].selfTimeUs >= op.selfTimeUs)).toBe(true);
    expect(topOpsTable(ops).rows).toHaveLength(10);
  });

  it('builds up to four pies and filters by side, type and name', () => {
    const tables = opStatsTables(reference('gpu_multi_worker', 'framework_op_stats.json'));
    // Upstream's GPU reference has no device op but IDLE: without IDLE only the host pies remain.
    expect(opStatsPies(tables.withoutIdle).map((p) => p.title)).toEqual([
      'Host-side self time by operation',
      'Host-side self time by operation type',
    ]);
    const pies = opStatsPies(tables.withIdle);
    expect(pies.map((p) => p.title)).toEqual([
      'Device-side self time by operation',
      'Device-side self time by operation type',
      'Host-side self time by operation',
      'Host-side self time by operation type',
    ]);
    expect(pies.every((p) => p.slices.length <= 10)).toBe(true);
    const hostOnly = filterOps(tables.withIdle!, { side: 'Host', type: 'idle', name: '' });
    expect(hostOnly.rows.length).toBe(1);
  });
});

describe('overview model edge cases', () => {
  it('maps tips to the run tools only', () => {
    expect(toolOfTip('trace_viewer (look at …)', ['trace_viewer@'])).toBe('trace_viewer@');
    expect(toolOfTip('pod_viewer', ['overview_page'])).toBeUndefined();
    expect(toolOfTip('Refer to the FAQ', ['faq'])).toBeUndefined();
  });

  it('survives an empty payload', () => {
    const model = overviewModel([]);
    expect(model.summary).toEqual([]);
    expect(model.stepTime).toBeNull();
    expect(overviewModel(null).tips).toEqual([]);
  });
});
