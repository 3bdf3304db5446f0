import { describe, expect, it } from 'vitest';
import { capturedText, clockOffset, progressText, remainingSeconds } from './progress';

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
    expect(progressText({ phase: 'cancelling' }, 20)).toBe('Cancelling the capture…');
    expect(progressText({}, 20)).toBe('Capturing…');
  });
});

describe('captured text', () => {
  it('says the new session is selected instead of asking for a refresh', () => {
    expect(capturedText('Capture profile successfully. Please refresh.', 'run/2026_01_01')).toBe(
      'Profile captured: run/2026_01_01. It is selected in the Run list.',
    );
    expect(capturedText('Capture profile successfully. Please refresh. 3 hosts.')).toBe('Profile captured. It is selected in the Run list.\n3 hosts.');
  });
});
