import { describe, expect, it } from 'vitest';
import { kernelPie, kernelTable } from '../models/kernel-stats';
import { memoryChartModel, memoryModel, type MemoryProfilePayload } from '../models/memory-profile';
import { overviewModel } from '../models/overview';
import { podStepModel, type PodViewerPayload } from '../models/pod-viewer';
import { haveReference, reference } from '../models/reference-fixtures';
import { pieOption, pieTooltip, stackedBarOption, stackedTooltip, timelineOption } from './options';
import { LIGHT_THEME } from './theme';
import { formatCompact } from '../format';

const XSS = '<img src=x onerror=alert(1)>';

describe.skipIf(!haveReference)('chart options of the tool models on reference payloads', () => {
  it('turns the step-time table into a stacked bar option with text tooltips', () => {
    const model = overviewModel(reference('jax_cpu_train', 'overview_page.json'));
    const option = stackedBarOption(model.stepTime!.chart, LIGHT_THEME) as { tooltip: { renderMode: string }; series: unknown[] };
    expect(option.tooltip.renderMode).toBe('richText');
    expect(option.series.length).toBe(model.stepTime!.chart.series.length);
    expect(stackedTooltip(model.stepTime!.chart, 0)).toMatch(/^Step /);
  });

  it('stacks one bar series per component of a pod step', () => {
    const model = podStepModel(reference('jax_two_hosts', 'pod_viewer.json') as PodViewerPayload, 0)!;
    const option = stackedBarOption(model.chart, LIGHT_THEME) as { series: unknown[] };
    expect(option.series).toHaveLength(2);
  });

  it('charts the top kernels with short, distinct legend entries', () => {
    const pie = kernelPie(kernelTable(reference('gpu_multi_worker', 'kernel_stats.json'))!);
    const option = pieOption(pie, LIGHT_THEME) as { tooltip: { renderMode: string }; legend: { formatter: (n: string) => string } };
    expect(option.tooltip.renderMode).toBe('richText');
    // Every legend entry is short and tells its kernel apart from the others.
    const legend = pie.slices.map((s) => option.legend.formatter(s.name));
    expect(new Set(legend).size).toBe(legend.length);
    expect(legend.every((l) => l.length <= 55)).toBe(true);
    expect(legend).toContain('EigenMetaKernel<half, Conversion, float>');
  });

  it('draws the memory timeline on two axes', () => {
    const payload = reference('gpu_multi_worker', 'memory_profile.34.83.195.179_6003.json') as MemoryProfilePayload;
    const chart = memoryChartModel(memoryModel(payload, 'GPU_4_bfc')!.timeline);
    const option = timelineOption(chart, LIGHT_THEME) as { yAxis: unknown[]; series: { yAxisIndex: number }[]; tooltip: { renderMode: string } };
    expect(option.yAxis).toHaveLength(2);
    expect(option.series.map((s) => s.yAxisIndex)).toEqual([0, 0, 0, 1]);
    expect(option.tooltip.renderMode).toBe('richText');
  });
});

describe('chart tooltips keep profile strings as text', () => {
  it('in a stacked bar', () => {
    const model = overviewModel([
      { cols: [{ id: 'stepnum', type: 'string' }, { id: 'hostComputeTimeMs', label: XSS, type: 'number' }], rows: [{ c: [{ v: XSS }, { v: 2 }] }] },
    ]);
    expect(stackedTooltip(model.stepTime!.chart, 0)).toContain(XSS);
  });

  it('in a pie', () => {
    expect(pieTooltip({ name: XSS, value: 5 }, 10, 'us')).toBe(`${XSS}\n5 us (50%)`);
  });
});

describe('value axes', () => {
  it('label ticks compactly (issue 28, item 8: 50M, not 50,000,000)', () => {
    expect([50_000_000, 1500, 999, 0.25, 0].map(formatCompact)).toEqual(['50M', '1.5K', '999', '0.25', '0']);
    const model = { categories: ['a'], series: [{ name: 's', values: [50_000_000] }], axisLabel: 'us' };
    const option = stackedBarOption(model as never, LIGHT_THEME) as { yAxis: { axisLabel: { formatter: (v: number) => string } } };
    expect(option.yAxis.axisLabel.formatter(50_000_000)).toBe('50M');
  });
});
