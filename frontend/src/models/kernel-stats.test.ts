import { describe, expect, it } from 'vitest';
import { pieOption, pieTooltip } from '../charts/options';
import { LIGHT_THEME } from '../charts/theme';
import { filterKernels, kernelPie, kernelSummary, kernelTable, NO_KERNEL_FILTER } from './kernel-stats';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('kernel stats on the GPU reference', () => {
  const table = kernelTable(reference('gpu_multi_worker', 'kernel_stats.json'))!;

  it('summarises and charts the top kernels', () => {
    const summary = kernelSummary(table);
    expect(summary.rows).toBe(table.rows.length);
    expect(summary.kernels).toBeGreaterThan(1);
    const pie = kernelPie(table);
    expect(pie.slices.length).toBeLessThanOrEqual(10);
    const total = pie.slices.reduce((sum, s) => sum + s.value, 0);
    expect(total).toBeCloseTo(summary.totalUs, 3);
    const option = pieOption(pie, LIGHT_THEME) as { tooltip: { renderMode: string }; legend: { formatter: (n: string) => string } };
    expect(option.tooltip.renderMode).toBe('richText');
    // Every legend entry is short and tells its kernel apart from the others.
    const legend = pie.slices.map((s) => option.legend.formatter(s.name));
    expect(new Set(legend).size).toBe(legend.length);
    expect(legend.every((l) => l.length <= 55)).toBe(true);
    expect(legend).toContain('EigenMetaKernel<half, Conversion, float>');
  });

  it('filters by kernel name, op name and Tensor Core use', () => {
    expect(filterKernels(table, NO_KERNEL_FILTER).rows.length).toBe(table.rows.length);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, kernel: 'philox' }).rows.length).toBeGreaterThan(0);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, kernel: 'zz_none' }).rows.length).toBe(0);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, tensorCore: 'yes' }).rows.length).toBe(0);
  });
});

describe('chart labels', () => {
  it('keeps tooltips as text', () => {
    expect(pieTooltip({ name: '<img src=x onerror=alert(1)>', value: 5 }, 10, 'us')).toBe('<img src=x onerror=alert(1)>\n5 us (50%)');
  });
});
