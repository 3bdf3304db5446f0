/**
 * Flow arrows of the timeline: where each arrow's ends sit (the depth of the events a flow links,
 * found once per window) and how one arrow is drawn (a bezier from the source's end to the
 * target's start, with a head).
 */
import type { FlowArrow, TraceWindow } from './contract';

const depthCache = new WeakMap<TraceWindow, Map<number, number>>();

/** Depth of each event a flow of `win` points at (built once per window). */
export function eventDepths(win: TraceWindow): Map<number, number> {
  const cached = depthCache.get(win);
  if (cached) return cached;
  const wanted = new Set<number>();
  for (const f of win.flows as FlowArrow[]) {
    wanted.add(f.fromEvent);
    wanted.add(f.toEvent);
  }
  const out = new Map<number, number>();
  for (const track of win.tracks.values()) {
    for (let i = 0; i < track.event.length; i++) if (wanted.has(track.event[i])) out.set(track.event[i], track.depth[i]);
  }
  depthCache.set(win, out);
  return out;
}

export function drawArrow(ctx: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number, color: string, width: number): void {
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  const bend = Math.max(12, Math.abs(x1 - x0) / 3);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1, y1);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 6, y1 - 3.5);
  ctx.lineTo(x1 - 6, y1 + 3.5);
  ctx.closePath();
  ctx.fill();
}
