import { describe, expect, it } from 'vitest';
import { clockOffset, progressText, remainingSeconds } from './progress';

describe('capture progress', () => {
  it('counts down to the expected end on the server clock', () => {
    expect(progressText({ state: 'running', phase: 'tracing', expected_end: 105 }, 100)).toBe('Tracing… 5 s left');
    // Server clock 50 s ahead of ours.
    const offset = clockOffset({ started_at: 150 }, 100);
    expect(offset).toBe(50);
    expect(remainingSeconds({ expected_end: 155 }, 101, offset)).toBe(4);
  });

  it('names the phase after the countdown', () => {
    expect(progressText({ phase: 'waiting', expected_end: 10 }, 20)).toBe('Waiting for the profiler to start…');
    expect(progressText({ phase: 'collecting', expected_end: 10 }, 20)).toMatch(/^Collecting/);
    expect(progressText({ phase: 'writing' }, 20)).toMatch(/^Writing/);
    expect(progressText({}, 20)).toBe('Capturing…');
  });
});
