import { describe, expect, it } from 'vitest';
import { decodeWindow } from './contract';
import { rangeStats } from './range-stats';
import { stubWindow } from './stub-answers';

const request = { startMs: 0, endMs: 0.3, resolution: 1000 };
const win = decodeWindow(stubWindow(request), request);

describe('rangeStats', () => {
  it('counts events overlapping the range, per name by total time', () => {
    const stats = rangeStats(win, { startMs: 0.005, endMs: 0.06 }, new Set(['1701:10']));
    expect(stats.count).toBe(3);
    expect(stats.totalMs).toBeCloseTo(0.1 + 0.03 + 0.02);
    expect(stats.byName.map((n) => n.name)).toEqual(['train 0', 'MatMul', 'Relu']);
    expect(stats.approximate).toBe(false);
  });
  it('counts the members of merged boxes and says the total is approximate', () => {
    const stats = rangeStats(win, { startMs: 0, endMs: 0.003 }, new Set(['1701:11']));
    expect(stats.count).toBe(10);
    expect(stats.approximate).toBe(true);
  });
  it('uses every track without a filter and keeps the top N', () => {
    const stats = rangeStats(win, { startMs: 0, endMs: 0.3 }, null, 2);
    expect(stats.count).toBe(15);
    expect(stats.byName).toHaveLength(2);
    expect(stats.names).toBe(6);
  });
});
