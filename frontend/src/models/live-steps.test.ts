import { describe, expect, it } from 'vitest';
import { liveStepsModel } from './live-steps';

const step = (n: number, duration: number, session: string | null = null) => ({
  step: n,
  start_time_ms: n * 100,
  duration_ms: duration,
  session,
});

describe('liveStepsModel', () => {
  it('lists the newest steps first, at most `shown`, with a summary', () => {
    const reply = { steps: [step(3, 9.5), step(4, 12.25), step(5, 150, 's1')], total: 6, capture: { state: 'idle' as const } };
    const model = liveStepsModel(reply, 2);
    expect(model.rows).toEqual([
      { step: 5, durationMs: 150, session: 's1' },
      { step: 4, durationMs: 12.25, session: null },
    ]);
    expect(model.summary).toBe('6 steps run; last 5 took 150 ms');
    expect(model.captureBusy).toBe(false);
    expect(model.captureText).toBe('');
  });

  it('says how to mark steps when there is none, and what a capture is doing', () => {
    const none = liveStepsModel({ steps: [], total: 0, capture: { state: 'armed' } });
    expect(none.summary).toContain('page.step()');
    expect(none.captureBusy).toBe(true);
    expect(none.captureText).toBe('Waiting for the next step to begin…');
    const done = liveStepsModel({ steps: [step(1, 1)], total: 1, capture: { state: 'done', step: 1, session: 's' } });
    expect(done.captureText).toBe('Step 1 saved as session s.');
    expect(done.capturedSession).toBe('s');
    expect(none.capturedSession).toBeNull();
    const failed = liveStepsModel({ steps: [], total: 0, capture: { state: 'failed', step: 2, message: 'busy' } });
    expect(failed.captureText).toBe('The capture of step 2 failed: busy');
  });
});
