import { describe, expect, it } from 'vitest';
import { memoryChartModel, memoryIds, memoryModel, timelineTooltip, type MemoryProfilePayload } from './memory-profile';
import { haveReference, reference } from './reference-fixtures';

describe.skipIf(!haveReference)('memory profile on reference payloads', () => {
  it('summarises tf_memory and lists the live allocations at the peak', () => {
    const payload = reference('tf_memory', 'memory_profile.json') as MemoryProfilePayload;
    expect(memoryIds(payload)).toEqual(['bfc_cpu_allocator_for_gpu']);
    const model = memoryModel(payload, 'bfc_cpu_allocator_for_gpu')!;
    expect(model.summary[0]).toEqual({ label: 'Peak memory usage (profile lifetime)', value: '29.3 MiB' });
    expect(model.summary.at(-1)).toEqual({ label: 'Allocations / deallocations in the 1000 sampled events', value: '899 / 101' });
    const counted = memoryModel({ ...payload, allocatorEventCounts: { bfc_cpu_allocator_for_gpu: { allocations: 1304, deallocations: 1247 } } }, 'bfc_cpu_allocator_for_gpu')!;
    expect(counted.summary.at(-1)).toEqual({ label: 'Allocations / deallocations', value: '1304 / 1247' });
    expect(model.breakdown.rows).toHaveLength(9);
    expect(model.breakdown.rows[0].c[0]!.v).toBe('unused preallocated device memory');
    expect(model.timeline.points).toHaveLength(1000);
    expect(model.timeline.hideFree).toBe(true);
    const points = model.timeline.points;
    expect(points.every((p, i) => i === 0 || points[i - 1].timeMs <= p.timeMs)).toBe(true);
  });

  it('builds a chart model whose tooltip names the event', () => {
    const payload = reference('gpu_multi_worker', 'memory_profile.34.83.195.179_6003.json') as MemoryProfilePayload;
    expect(memoryIds(payload)).toEqual(['GPU_1_bfc', 'GPU_4_bfc', 'GPU_6_bfc', 'gpu_host_bfc']);
    const model = memoryModel(payload, 'GPU_4_bfc')!;
    const chart = memoryChartModel(model.timeline);
    expect(chart.series.map((s) => Boolean(s.rightAxis))).toEqual([false, false, false, true]);
    expect(chart.tooltip(0)).toMatch(/ALLOCATION|DEALLOCATION/);
  });

  it('handles a profile without allocator events', () => {
    const payload = reference('jax_cpu_train', 'memory_profile.json') as MemoryProfilePayload;
    expect(memoryIds(payload)).toEqual([]);
    expect(memoryModel(payload, 'x')).toBeNull();
  });
});

describe('memory tooltip', () => {
  it('keeps op names as text', () => {
    const text = timelineTooltip({
      timeMs: 1,
      stackMiB: 0,
      heapMiB: 1,
      freeMiB: 2,
      fragmentationPercent: 3,
      event: { memoryActivity: 'ALLOCATION', tfOpName: '<img src=x onerror=alert(1)>' },
    });
    expect(text).toContain('ALLOCATION: <img src=x onerror=alert(1)>');
  });
});
