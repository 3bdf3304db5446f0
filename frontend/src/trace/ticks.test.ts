import { describe, expect, it } from 'vitest';
import { formatDuration } from '../format';
import { formatTickLabel, niceStep, ticks } from './ticks';

describe('niceStep', () => {
  it('rounds up to 1, 2 or 5 × 10^k', () => {
    expect(niceStep(0.7)).toBe(1);
    expect(niceStep(1)).toBe(1);
    expect(niceStep(1.3)).toBe(2);
    expect(niceStep(3)).toBe(5);
    expect(niceStep(7)).toBe(10);
    expect(niceStep(0.00031)).toBeCloseTo(0.0005, 12);
  });
});

describe('tick labels', () => {
  it('use the unit of the offsets in view and the decimals of the step', () => {
    expect(formatTickLabel(0, 1)).toBe('0');
    expect(formatTickLabel(2000, 500, 2000)).toBe('2.0 s');
    expect(formatTickLabel(2000, 1000, 2000)).toBe('2 s');
    expect(formatTickLabel(1.5, 0.5)).toBe('1.5 ms');
    expect(formatTickLabel(0.02, 0.01)).toBe('20 µs');
    expect(formatTickLabel(0.00002, 0.00001)).toBe('20 ns');
    // 200 ns steps 1.2 ms into the trace
    expect(formatTickLabel(1.2004, 0.0002, 1.3)).toBe('1.2004 ms');
  });
  it('formats durations with three significant digits', () => {
    expect(formatDuration(12.345)).toBe('12.3 ms');
    expect(formatDuration(0.5)).toBe('500 µs');
    expect(formatDuration(2500)).toBe('2.50 s');
    expect(formatDuration(0.0000123)).toBe('12.3 ns');
    expect(formatDuration(0)).toBe('0');
  });
});

describe('ticks', () => {
  it('spaces ticks at least the minimum apart and labels them from the origin', () => {
    const view = { startMs: 10, endMs: 20, widthPx: 1000 };
    const out = ticks(view, 10, 90);
    expect(out.map((t) => t.label)).toEqual(['0', '1 ms', '2 ms', '3 ms', '4 ms', '5 ms', '6 ms', '7 ms', '8 ms', '9 ms', '10 ms']);
    for (let i = 1; i < out.length; i++) expect(out[i].x - out[i - 1].x).toBeGreaterThanOrEqual(90);
  });
  it('gives distinct labels when zoomed to nanoseconds far into the trace', () => {
    const view = { startMs: 5000.00001, endMs: 5000.00011, widthPx: 1000 }; // 100 ns, 5 s in
    const labels = ticks(view, 0, 90).map((t) => t.label);
    expect(labels.length).toBeGreaterThan(3);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels[0]).toBe('5.00000001 s');
  });
  it('is empty for a degenerate view', () => {
    expect(ticks({ startMs: 1, endMs: 1, widthPx: 100 }, 0)).toEqual([]);
  });
});
