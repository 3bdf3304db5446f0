import { describe, expect, it } from 'vitest';
import { filterKernels, kernelPie, kernelSummary, kernelTable, NO_KERNEL_FILTER } from './kernel-stats';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('kernel stats on the GPU reference', () => {
  const table = kernelTable(reference('gpu_multi_worker', 'kernel_stats.json'))!;

  it('summarises the top kernels in a pie', () => {
    const summary = kernelSummary(table);
    expect(summary.rows).toBe(table.rows.length);
    expect(summary.kernels).toBeGreaterThan(1);
    const pie = kernelPie(table);
    expect(pie.slices.length).toBeLessThanOrEqual(10);
    const total = pie.slices.reduce((sum, s) => sum + s.value, 0);
    expect(total).toBeCloseTo(summary.totalUs, 3);
  });

  it('filters by kernel name, op name and Tensor Core use', () => {
    expect(filterKernels(table, NO_KERNEL_FILTER).rows.length).toBe(table.rows.length);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, kernel: 'philox' }).rows.length).toBeGreaterThan(0);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, kernel: 'zz_none' }).rows.length).toBe(0);
    expect(filterKernels(table, { ...NO_KERNEL_FILTER, tensorCore: 'yes' }).rows.length).toBe(0);
  });
});
