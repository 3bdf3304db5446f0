/**
 * The live page's step list (`GET live_steps`, capture/live_steps.py) → what the panel shows:
 * the newest steps first, a one-line summary, and what the "Capture next step" button says.
 *
 *   liveStepsModel({ steps: [{ step: 7, start_time_ms: 1, duration_ms: 12.5, session: null }], total: 8,
 *                    capture: { state: 'idle' } })
 *     → { rows: [{ step: 7, durationMs: 12.5, session: null }], summary: '8 steps run; last 7 took 12.5 ms', … }
 */

export interface LiveStep {
  step: number;
  start_time_ms: number;
  duration_ms: number;
  session: string | null;
}

export interface StepCapture {
  state: 'idle' | 'armed' | 'tracing' | 'done' | 'failed';
  step?: number;
  session?: string | null;
  message?: string;
}

export interface LiveStepsReply {
  steps: LiveStep[];
  total: number;
  capture: StepCapture;
}

export interface LiveStepRow {
  step: number;
  durationMs: number;
  session: string | null;
}

export interface LiveStepsModel {
  rows: LiveStepRow[];
  summary: string;
  captureBusy: boolean;
  captureText: string;
  /** The session of the step just captured, to open it (it may have left the list by now). */
  capturedSession: string | null;
}

/** How many of the kept steps the panel lists (the server keeps up to 1,000). */
export const SHOWN_STEPS = 8;

function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function captureText(capture: StepCapture): string {
  switch (capture.state) {
    case 'armed':
      return 'Waiting for the next step to begin…';
    case 'tracing':
      return `Tracing step ${capture.step ?? ''}…`;
    case 'done':
      return `Step ${capture.step ?? ''} saved as session ${capture.session ?? ''}.`;
    case 'failed':
      return `The capture of step ${capture.step ?? ''} failed: ${capture.message ?? 'see the training script\'s log'}`;
    default:
      return '';
  }
}

export function liveStepsModel(reply: LiveStepsReply, shown: number = SHOWN_STEPS): LiveStepsModel {
  const steps = Array.isArray(reply.steps) ? reply.steps : [];
  const rows = steps
    .slice(-shown)
    .reverse()
    .map((s) => ({ step: s.step, durationMs: s.duration_ms, session: s.session ?? null }));
  const last = steps[steps.length - 1];
  const total = Number(reply.total) || 0;
  const summary =
    total === 0
      ? 'No step yet: mark the training steps with `with page.step():` to list them here.'
      : `${total} step${total === 1 ? '' : 's'} run; last ${last?.step ?? ''} took ${ms(last?.duration_ms ?? 0)} ms`;
  const state = reply.capture?.state ?? 'idle';
  return {
    rows,
    summary,
    captureBusy: state === 'armed' || state === 'tracing',
    captureText: captureText(reply.capture ?? { state: 'idle' }),
    capturedSession: state === 'done' ? (reply.capture.session ?? null) : null,
  };
}

export function formatStepMs(value: number): string {
  return ms(value);
}
