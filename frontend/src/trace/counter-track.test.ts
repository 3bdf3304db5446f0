import { describe, expect, it } from 'vitest';
import { decodeWindow, trackKey, type WindowAnswer } from './contract';
import { counterMax, counterPath, counterScale, counterSteps, counterTooltip, formatCounterValue, isCounter } from './counter-track';

// An allocator series of four samples (ns from 0): 1 KiB, 3 KiB, 2 KiB (0.5 µs), 4 KiB (0.5 µs), then a slice row.
const answer: WindowAnswer = {
  version: 1,
  window: [0, 0.01],
  origin_ns: 0,
  fullTimespan: [0, 0.01],
  resolution: 100,
  strings: ['Allocated (bytes)', 'op'],
  processes: [{ pid: 1, name: 'Memory (CPU)' }],
  threads: [{ pid: 1, tid: 7, name: 'Memory (CPU) Allocated (bytes)' }, { pid: 1, tid: 8, name: 'thread' }],
  rows: [
    { pid: 1, tid: 7, ts: [0, 2000, 5000, 5500], dur: [2000, 3000, 500, 4500], name: [0, 0, 0, 0], depth: [0, 0, 0, 0], merged: [1, 1, 1, 1], event: [1, 2, 3, 4], value: [1024, 3072, 2048, 4096] },
    { pid: 1, tid: 8, ts: [0], dur: [10000], name: [1], depth: [0], merged: [1], event: [9] },
  ],
};
const request = { startMs: 0, endMs: 0.01, resolution: 100 };
const win = decodeWindow(answer, request);
const series = win.tracks.get(trackKey(1, 7))!;

describe('counter rows', () => {
  it('are the rows whose answer has values', () => {
    expect(isCounter(series)).toBe(true);
    expect(isCounter(win.tracks.get(trackKey(1, 8)))).toBe(false);
    expect([...series.value!]).toEqual([1024, 3072, 2048, 4096]);
  });

  it('turn samples into steps lasting to the next sample, in pixels', () => {
    // 0.01 ms over 1000 px: 1 µs = 100 px.
    const steps = counterSteps(series, 0, 0.01, 0, 1000 / 0.01, 0, 1000);
    expect(steps).toEqual([0, 200, 1024, 200, 500, 3072, 500, 550, 2048, 550, 1000, 4096]);
  });

  it('fold samples narrower than a pixel into one step at their peak', () => {
    // 0.01 ms over 2 px: every sample is under a pixel until the last one.
    const steps = counterSteps(series, 0, 0.01, 0, 2 / 0.01, 0, 2);
    expect(steps.length).toBeLessThan(12);
    expect(Math.max(...steps.filter((_, j) => j % 3 === 2))).toBe(4096);
    expect(steps[0]).toBe(0);
    expect(steps[steps.length - 2]).toBeCloseTo(2);
  });

  it('scale to the largest value, drawn up from the baseline', () => {
    expect(counterMax(series)).toBe(4096);
    const points = counterPath([0, 10, 1024, 10, 30, 4096], 4096, 100, 40);
    expect(points).toEqual([0, 140, 0, 130, 10, 130, 10, 100, 30, 100, 30, 140]);
    expect(counterPath([], 1, 0, 10)).toEqual([]);
    expect(counterPath([0, 5, 3], 0, 0, 10)).toEqual([0, 10, 0, 10, 5, 10, 5, 10]); // max 0: flat on the base
  });

  it('label the scale and tooltips with bytes in binary units', () => {
    expect(counterScale(series.key, 'Memory (CPU) Allocated (bytes)', [win, undefined])).toEqual({ max: 4096, label: 'max 4.00 KiB' });
    expect(counterScale(trackKey(1, 8), 'thread', [win])).toBeNull();
    expect(counterTooltip(win, series, 1, 'Memory (CPU) Allocated (bytes)', 'at 2 µs')).toEqual(['Allocated (bytes): 3.00 KiB', 'at 2 µs']);
    expect(formatCounterValue(3 * 1024 * 1024 * 1024, true)).toBe('3.00 GiB');
    expect(formatCounterValue(12.5, false)).toBe('12.5');
  });
});
