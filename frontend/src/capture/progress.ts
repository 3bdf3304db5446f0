/**
 * What the capture dialog says while an `async=1` capture runs, from `capture_status` (epoch
 * seconds on the server's clock). `clockOffsetS` = server time − local time, estimated when the
 * job started, so the countdown is right even when the clocks differ.
 *
 *   progressText({state: 'running', phase: 'tracing', expected_end: 105}, 100, 0) → 'Tracing… 5 s left'
 */
import type { CaptureStatus } from '../api';

export function remainingSeconds(status: CaptureStatus, nowS: number, clockOffsetS: number): number {
  if (typeof status.expected_end !== 'number') return 0;
  return Math.max(0, Math.ceil(status.expected_end - (nowS + clockOffsetS)));
}

export function progressText(status: CaptureStatus, nowS: number, clockOffsetS = 0): string {
  const left = remainingSeconds(status, nowS, clockOffsetS);
  switch (status.phase) {
    case 'waiting':
      return left > 0 ? `Waiting for the profiler to start… ${left} s until the trace ends` : 'Waiting for the profiler to start…';
    case 'tracing':
      return left > 0 ? `Tracing… ${left} s left` : 'Tracing… finishing';
    case 'collecting':
      return 'Collecting the trace from the profiler server…';
    case 'writing':
      return 'Writing the session into the log directory…';
    case 'cancelling':
      return 'Cancelling the capture…';
    default:
      return left > 0 ? `Capturing… ${left} s left` : 'Capturing…';
  }
}

/** Server clock minus local clock, from the first status (`started_at` ≈ when we asked). */
export function clockOffset(status: CaptureStatus, requestedAtS: number): number {
  return typeof status.started_at === 'number' ? status.started_at - requestedAtS : 0;
}

/**
 * The dialog's words for a finished capture. The server answers upstream's "Capture profile
 * successfully. Please refresh." but the page has already switched to the new session.
 */
export function capturedText(serverMessage: string, session?: string): string {
  const rest = serverMessage
    .replace(/Capture profile successfully\.?/i, '')
    .replace(/Please refresh\.?/i, '')
    .trim();
  const head = session ? `Profile captured: ${session}. It is selected in the Run list.` : 'Profile captured. It is selected in the Run list.';
  return rest ? `${head}\n${rest}` : head;
}
