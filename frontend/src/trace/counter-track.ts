/**
 * Counter rows of the timeline (allocator memory, Chrome-trace `C` series): a filled step chart
 * of the value over time instead of one slice per sample, like Chrome tracing's and Perfetto's
 * counter tracks. The window answer marks them by a `value` column (docs/trace_viewer.md,
 * "Counters"); a merged box carries its peak, so a short spike survives zooming out.
 *
 * Speed, as for slices (renderer.ts): only the samples overlapping the view are visited (one
 * binary search), samples inside an already drawn pixel fold into it keeping the largest value,
 * and each series is one path per window per frame.
 *
 *   const steps = counterSteps(track, t0, t1, view.startMs, k, clipX0, clipX1);
 *   drawCounter(ctx, counterPath(steps, counterMax(track), top, height), colour);
 */
import type { TraceWindow, TrackData } from './contract';
import { laneRange } from './hit-test';
import { formatBytes, formatNumber } from '../format';

/** A counter row is this many lanes tall, so the chart has room to show its shape. */
export const COUNTER_LANES = 3;

export function isCounter(track: TrackData | undefined): boolean {
  return !!track && track.value !== null;
}

/**
 * Visible steps as flat triples (x0, x1, value) in tracks-area px: a sample lasts from its begin
 * to the next one's, and consecutive samples that together span less than a pixel become one
 * step at their largest value, so a frame costs at most about one step per pixel column.
 */
export function counterSteps(track: TrackData, t0: number, t1: number, startMs: number, k: number, clipX0: number, clipX1: number): number[] {
  const out: number[] = [];
  const values = track.value;
  if (!values) return out;
  const [from, to] = laneRange(track, 0, t0, t1);
  for (let i = from; i < to; i++) {
    const x0 = Math.max(clipX0, (track.beginMs[i] - startMs) * k);
    const x1 = Math.min(clipX1, (track.endMs[i] - startMs) * k);
    const n = out.length;
    if (n && x1 - out[n - 3] < 1) {
      // This sample and the step before it fit in one pixel: one column at their peak.
      out[n - 2] = Math.max(out[n - 2], x1);
      out[n - 1] = Math.max(out[n - 1], values[i]);
      continue;
    }
    out.push(x0, Math.max(x1, x0), values[i]);
  }
  return out;
}

/** Largest value of the series in this window (the scale's top), cached per track. */
const maxCache = new WeakMap<TrackData, number>();
export function counterMax(track: TrackData): number {
  let max = maxCache.get(track);
  if (max !== undefined) return max;
  max = 0;
  for (const v of track.value ?? []) if (v > max) max = v;
  maxCache.set(track, max);
  return max;
}

/**
 * Outline of the filled chart as flat (x, y) pairs: down to the baseline at the first step,
 * across each step at its height (value / max of `height`, drawn up from `top + height`), and
 * back to the baseline after the last one. A value at or below 0, or with max 0, sits on the base.
 */
export function counterPath(steps: readonly number[], max: number, top: number, height: number): number[] {
  const base = top + height;
  const points: number[] = [];
  if (!steps.length) return points;
  const scale = max > 0 ? height / max : 0;
  points.push(steps[0], base);
  for (let j = 0; j < steps.length; j += 3) {
    const y = base - Math.min(height, Math.max(0, steps[j + 2]) * scale);
    points.push(steps[j], y, steps[j + 1], y);
  }
  points.push(steps[steps.length - 2], base);
  return points;
}

export function drawCounter(ctx: CanvasRenderingContext2D, points: readonly number[], colour: string): void {
  if (points.length < 4) return;
  ctx.beginPath();
  ctx.moveTo(points[0], points[1]);
  for (let j = 2; j < points.length; j += 2) ctx.lineTo(points[j], points[j + 1]);
  ctx.closePath();
  ctx.fillStyle = colour;
  ctx.globalAlpha = 0.45;
  ctx.fill();
  ctx.globalAlpha = 1;
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1;
  ctx.stroke();
}

/**
 * Whether a series counts bytes: its row, series or process name says so (PyTorch's
 * "Allocated (bytes)"), or it is a TensorFlow allocator (ProfilerHook's "Allocators" process,
 * whose series are bytes in use).
 */
export function countsBytes(win: TraceWindow, track: TrackData, rowName: string): boolean {
  const process = win.processes.find((p) => p.pid === track.pid)?.name ?? '';
  const series = track.name.length ? (win.strings[track.name[0]] ?? '') : '';
  return /bytes/i.test(`${rowName} ${series} ${process}`) || /\bAllocators$/.test(process);
}

/** A sample's value as shown: bytes in KiB/MiB/GiB, other counts as plain numbers. */
export function formatCounterValue(value: number, bytes: boolean): string {
  if (!bytes || !Number.isFinite(value)) return formatNumber(value);
  return value < 0 ? `-${formatBytes(-value)}` : formatBytes(value);
}

/**
 * The shared scale of a counter row across the windows drawn (the detailed window and the
 * overview around it) and its label, e.g. "max 97.92 KiB"; null for a row of slices.
 */
export function counterScale(key: string, rowName: string, windows: readonly (TraceWindow | undefined)[]): { max: number; label: string } | null {
  let max = -1;
  let bytes = false;
  for (const win of windows) {
    const track = win?.tracks.get(key);
    if (!win || !track || !isCounter(track)) continue;
    max = Math.max(max, counterMax(track));
    bytes ||= countsBytes(win, track, rowName);
  }
  return max < 0 ? null : { max, label: `max ${formatCounterValue(max, bytes)}` };
}

/** Tooltip lines of a counter sample: the series and its value with units (a box: its peak). */
export function counterTooltip(win: TraceWindow, track: TrackData, i: number, rowName: string, when: string): string[] {
  const series = win.strings[track.name[i]] ?? '';
  const value = formatCounterValue(track.value?.[i] ?? NaN, countsBytes(win, track, rowName));
  if (track.merged[i] > 1) return [`${series}: peak ${value} of ${track.merged[i]} samples`, when, 'zoom in for each sample'];
  return [`${series}: ${value}`, when];
}
