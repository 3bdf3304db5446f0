/**
 * The visible time span and its mapping to pixels. Pure: every operation returns a new span,
 * clamped to the trace bounds and to a smallest zoom, so the component only stores the result.
 *
 *   const x = timeToX(view, event.startMs);
 *   view = { ...view, ...zoomAt(view, 0.8, x / view.widthPx, bounds) };
 */

export interface TimeSpan {
  startMs: number;
  endMs: number;
}

export interface Viewport extends TimeSpan {
  /** CSS pixels of the time axis. */
  widthPx: number;
}

/** 10 ns: narrower views show nothing useful at any screen size. */
export const MIN_SPAN_MS = 1e-5;

export function spanOf(span: TimeSpan): number {
  return span.endMs - span.startMs;
}

export function timeToX(view: Viewport, timeMs: number): number {
  return ((timeMs - view.startMs) / spanOf(view)) * view.widthPx;
}

export function xToTime(view: Viewport, x: number): number {
  return view.startMs + (x / view.widthPx) * spanOf(view);
}

/** ms per CSS pixel. */
export function pixelMs(view: Viewport): number {
  return spanOf(view) / Math.max(1, view.widthPx);
}

/** `span` moved and shrunk to lie inside `bounds`, at least `minSpan` wide. */
export function clampSpan(span: TimeSpan, bounds: TimeSpan, minSpan = MIN_SPAN_MS): TimeSpan {
  const boundsSpan = Math.max(spanOf(bounds), minSpan);
  let width = Math.min(Math.max(spanOf(span), minSpan), boundsSpan);
  if (!Number.isFinite(width)) width = boundsSpan;
  let start = Number.isFinite(span.startMs) ? span.startMs : bounds.startMs;
  if (start < bounds.startMs) start = bounds.startMs;
  if (start + width > bounds.startMs + boundsSpan) start = bounds.startMs + boundsSpan - width;
  return { startMs: start, endMs: start + width };
}

/**
 * Zoom by `factor` (< 1 zooms in) keeping the time under `anchor` (0 = left edge, 1 = right
 * edge) where it is on screen.
 */
export function zoomAt(span: TimeSpan, factor: number, anchor: number, bounds: TimeSpan, minSpan = MIN_SPAN_MS): TimeSpan {
  const a = Math.min(1, Math.max(0, anchor));
  const width = spanOf(span);
  const pivot = span.startMs + a * width;
  const next = Math.min(Math.max(width * factor, minSpan), Math.max(spanOf(bounds), minSpan));
  return clampSpan({ startMs: pivot - a * next, endMs: pivot - a * next + next }, bounds, minSpan);
}

export function panBy(span: TimeSpan, deltaMs: number, bounds: TimeSpan): TimeSpan {
  return clampSpan({ startMs: span.startMs + deltaMs, endMs: span.endMs + deltaMs }, bounds);
}

/**
 * A span showing [startMs, endMs] in its middle with `margin` of the result on each side; a zero
 * or tiny duration keeps at least `minSpan` (e.g. an instant event).
 */
export function fitSpan(target: TimeSpan, bounds: TimeSpan, margin = 0.1, minSpan = MIN_SPAN_MS * 100): TimeSpan {
  const width = Math.max(spanOf(target), 0);
  const total = Math.max(width / Math.max(1e-9, 1 - 2 * margin), minSpan);
  const centre = (target.startMs + target.endMs) / 2;
  return clampSpan({ startMs: centre - total / 2, endMs: centre + total / 2 }, bounds);
}

export function sameSpan(a: TimeSpan, b: TimeSpan, tolerance = 1e-9): boolean {
  const scale = Math.max(spanOf(a), spanOf(b), 1e-12);
  return Math.abs(a.startMs - b.startMs) <= tolerance * scale && Math.abs(a.endMs - b.endMs) <= tolerance * scale;
}

export function overlaps(a: TimeSpan, b: TimeSpan): boolean {
  return a.startMs <= b.endMs && a.endMs >= b.startMs;
}
