import { describe, expect, it } from 'vitest';
import { LIGHT_THEME } from './theme';
import { heapOption, roofLine } from './xla-options';

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
