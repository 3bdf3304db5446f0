/**
 * Draws one frame of the timeline on a 2D canvas: ruler, process headers, thread names, event
 * boxes, flow arrows, selection, range and tooltip. Nothing here keeps state between frames
 * except reusable buffers, so a frame is a pure function of the `Scene`.
 *
 * Speed: only rows in the viewport are visited (layout.visibleSlice), each lane is entered by
 * binary search, boxes that fall inside an already painted pixel are skipped, and boxes are
 * batched per colour into one path, so a frame costs a few fills per colour rather than one
 * state change per event. The same answer drawn at another span is just another transform,
 * which is what keeps panning smooth while the next window loads.
 */
import { fitLabel, colorIndex, HUES, isMergedBox, type Palette, type ThemeName } from './colors';
import type { TraceWindow, TrackData } from './contract';
import { counterPath, counterScale, counterSteps, drawCounter } from './counter-track';
import { drawArrow, eventDepths } from './flow-arrows';
import { laneRange } from './hit-test';
import { GROUP_HEADER_PX, LANE_PX, laneCentre, visibleSlice, type Layout, type LayoutTrack } from './layout';
import { formatDuration } from '../format';
import { ticks } from './ticks';
import { timeToX, type TimeSpan, type Viewport } from './viewport';

export const GUTTER_PX = 200;
export const RULER_PX = 26;
const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const BOLD_FONT = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const MIN_LABEL_PX = 24;

export interface Theme {
  name: ThemeName;
  background: string;
  surface: string;
  surface2: string;
  border: string;
  text: string;
  muted: string;
  accent: string;
  focus: string;
  palette: Palette;
}

export interface SelectionMark extends TimeSpan {
  trackKey: string;
  depth: number;
  event: number;
}

export interface Scene {
  widthPx: number;
  heightPx: number;
  dpr: number;
  /** Time axis of the tracks area (its width excludes the gutter). */
  view: Viewport;
  originMs: number;
  scrollTop: number;
  layout: Layout;
  primary?: TraceWindow;
  fallback?: TraceWindow;
  selection?: SelectionMark | null;
  range?: (TimeSpan & { tracks: ReadonlySet<string> | null }) | null;
  matches?: ReadonlySet<number>;
  matchTimes?: Float64Array;
  tooltip?: { x: number; y: number; lines: string[] } | null;
  /**
   * Every flow arrow in view; otherwise only the selected event's. All of them over a whole
   * trace are a mesh that hides the events (XProf draws none by default).
   */
  allFlows?: boolean;
  /** A range being dragged (x in tracks-area px). */
  dragRange?: { x0: number; x1: number } | null;
  theme: Theme;
}

export class TimelineRenderer {
  private readonly buckets: number[][] = Array.from({ length: HUES }, () => []);
  private readonly mergedRects: number[] = [];
  private readonly outlines: number[] = [];
  private labels: { x: number; y: number; w: number; text: string }[] = [];
  private charPx = 6.2;
  private hatch: CanvasPattern | null = null;
  private hatchTheme = '';
  /** Flow arrows drawn in the last frame (read by tests). */
  flowsDrawn = 0;
  /** Counter chart paths drawn in the last frame (read by tests). */
  countersDrawn = 0;

  constructor(private readonly ctx: CanvasRenderingContext2D) {
    ctx.font = FONT;
    const sample = 'abcdefghijklmnopqrstuvwxyz_ABCDEFG:0123456789';
    this.charPx = ctx.measureText(sample).width / sample.length || 6.2;
  }

  draw(scene: Scene): void {
    const { ctx } = this;
    const { widthPx, heightPx, dpr, theme } = scene;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = theme.background;
    ctx.fillRect(0, 0, widthPx, heightPx);
    this.ensureHatch(theme);

    const tracksTop = RULER_PX;
    const tracksHeight = heightPx - RULER_PX;
    const slice = visibleSlice(scene.layout, scene.scrollTop, tracksHeight);

    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER_PX, tracksTop, widthPx - GUTTER_PX, tracksHeight);
    ctx.clip();
    ctx.translate(GUTTER_PX, tracksTop - scene.scrollTop);
    this.drawGrid(scene, slice.tracks);
    this.drawEvents(scene, slice.tracks);
    this.drawFlows(scene);
    this.drawSelection(scene);
    ctx.restore();

    this.drawRange(scene, tracksTop, tracksHeight);
    this.drawGutter(scene, slice.groups, slice.tracks, tracksTop);
    this.drawRuler(scene);
    this.drawScrollbar(scene, tracksTop, tracksHeight);
    if (scene.tooltip) this.drawTooltip(scene, scene.tooltip);
  }

  private ensureHatch(theme: Theme): void {
    if (this.hatch && this.hatchTheme === theme.name) return;
    const tile = document.createElement('canvas');
    tile.width = tile.height = 6;
    const t = tile.getContext('2d');
    if (!t) return;
    t.fillStyle = theme.palette.merged;
    t.fillRect(0, 0, 6, 6);
    t.strokeStyle = theme.palette.mergedStripe;
    t.lineWidth = 1.5;
    t.beginPath();
    t.moveTo(-1, 7);
    t.lineTo(7, -1);
    t.stroke();
    this.hatch = this.ctx.createPattern(tile, 'repeat');
    this.hatchTheme = theme.name;
  }

  private drawGrid(scene: Scene, tracks: readonly LayoutTrack[]): void {
    const { ctx } = this;
    const { theme, view } = scene;
    ctx.fillStyle = theme.surface;
    for (let i = 0; i < tracks.length; i += 1) {
      const t = tracks[i];
      if (i % 2 === 1) ctx.fillRect(0, t.y, view.widthPx, t.height);
    }
  }

  private drawEvents(scene: Scene, tracks: readonly LayoutTrack[]): void {
    const { primary, fallback, view } = scene;
    for (const b of this.buckets) b.length = 0;
    this.mergedRects.length = 0;
    this.outlines.length = 0;
    this.labels = [];
    this.countersDrawn = 0;
    const top = scene.scrollTop;
    const bottom = scene.scrollTop + scene.heightPx - RULER_PX;
    for (const track of tracks) {
      if (track.collapsed) continue;
      const scale = counterScale(track.key, track.name, [primary, fallback]);
      if (scale) this.labels.push({ x: 0, y: track.y, w: 240, text: scale.label });
      const max = scale?.max ?? -1;
      if (primary) this.collectTrack(scene, primary, track, Math.max(view.startMs, primary.startMs), Math.min(view.endMs, primary.endMs), top, bottom, max);
      if (fallback) {
        // The overview fills what the primary window does not reach (or everything without one).
        const p0 = primary ? primary.startMs : Infinity;
        const p1 = primary ? primary.endMs : -Infinity;
        if (view.startMs < p0) this.collectTrack(scene, fallback, track, view.startMs, Math.min(view.endMs, p0), top, bottom, max);
        if (view.endMs > p1) this.collectTrack(scene, fallback, track, Math.max(view.startMs, p1), view.endMs, top, bottom, max);
      }
    }
    this.flush(scene);
  }

  /** Lanes of slices into the colour batches; a counter row (`counterMax` ≥ 0) is drawn at once as one chart path. */
  private collectTrack(scene: Scene, win: TraceWindow, track: LayoutTrack, t0: number, t1: number, top: number, bottom: number, counterMax: number): void {
    if (!(t1 > t0)) return;
    const data = win.tracks.get(track.key);
    if (!data) return;
    const { view } = scene;
    const k = view.widthPx / (view.endMs - view.startMs);
    const clipX0 = Math.max(0, (t0 - view.startMs) * k);
    const clipX1 = Math.min(view.widthPx, (t1 - view.startMs) * k);
    if (data.value) {
      const steps = counterSteps(data, t0, t1, view.startMs, k, clipX0, clipX1);
      this.countersDrawn++;
      const colour = scene.theme.palette.fills[colorIndex(track.name)];
      return drawCounter(this.ctx, counterPath(steps, counterMax, track.y + 2, track.height - 3), colour);
    }
    const lanes = Math.min(track.lanes - 1, data.maxDepth);
    for (let depth = 0; depth <= lanes; depth++) {
      const y = track.y + depth * LANE_PX;
      if (y + LANE_PX < top || y > bottom) continue;
      this.collectLane(scene, win, data, depth, y, t0, t1, k, clipX0, clipX1);
    }
  }

  private collectLane(scene: Scene, win: TraceWindow, data: TrackData, depth: number, y: number, t0: number, t1: number, k: number, clipX0: number, clipX1: number): void {
    const [from, to] = laneRange(data, depth, t0, t1);
    const { beginMs, endMs, merged, name, event } = data;
    const start = scene.view.startMs;
    const matches = scene.matches;
    let painted = -Infinity;
    const h = LANE_PX - 1;
    for (let i = from; i < to; i++) {
      let x0 = (beginMs[i] - start) * k;
      let x1 = (endMs[i] - start) * k;
      if (x0 < clipX0) x0 = clipX0;
      if (x1 > clipX1) x1 = clipX1;
      if (x1 - x0 < 1) x1 = x0 + 1;
      if (x1 <= painted) continue; // inside a pixel already painted
      if (x0 < painted) x0 = painted;
      painted = x1;
      const w = x1 - x0;
      const label = win.strings[name[i]] ?? '';
      if (isMergedBox(merged[i])) {
        this.mergedRects.push(x0, y, w, h);
        if (w >= MIN_LABEL_PX) this.labels.push({ x: x0, y, w, text: `${merged[i]} events` });
      } else {
        this.buckets[colorIndex(label)].push(x0, y, w, h);
        if (w >= MIN_LABEL_PX) this.labels.push({ x: x0, y, w, text: label });
      }
      if (matches && matches.has(event[i])) this.outlines.push(x0, y, w, h);
    }
  }

  private flush(scene: Scene): void {
    const { ctx } = this;
    const { palette } = scene.theme;
    for (let c = 0; c < HUES; c++) {
      const rects = this.buckets[c];
      if (!rects.length) continue;
      ctx.fillStyle = palette.fills[c];
      ctx.beginPath();
      for (let j = 0; j < rects.length; j += 4) ctx.rect(rects[j], rects[j + 1], rects[j + 2], rects[j + 3]);
      ctx.fill();
    }
    if (this.mergedRects.length) {
      ctx.fillStyle = this.hatch ?? palette.merged;
      ctx.beginPath();
      const r = this.mergedRects;
      for (let j = 0; j < r.length; j += 4) ctx.rect(r[j], r[j + 1], r[j + 2], r[j + 3]);
      ctx.fill();
    }
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.fillStyle = palette.text;
    for (const l of this.labels) {
      const text = fitLabel(l.text, l.w, this.charPx);
      if (text) ctx.fillText(text, l.x + 3, l.y + LANE_PX / 2);
    }
    if (this.outlines.length) {
      ctx.strokeStyle = scene.theme.focus;
      ctx.lineWidth = 2;
      ctx.beginPath();
      const o = this.outlines;
      for (let j = 0; j < o.length; j += 4) ctx.rect(o[j] + 1, o[j + 1] + 1, Math.max(o[j + 2] - 2, 1), o[j + 3] - 2);
      ctx.stroke();
    }
  }

  private drawFlows(scene: Scene): void {
    this.flowsDrawn = 0;
    const win = scene.primary ?? scene.fallback;
    if (!win || !win.flows.length) return;
    const { ctx } = this;
    const depth = eventDepths(win);
    const selected = scene.selection?.event;
    const limit = Math.min(win.flows.length, 5000);
    ctx.lineWidth = 1;
    for (let i = 0; i < limit; i++) {
      const f = win.flows[i];
      const hot = selected !== undefined && (f.fromEvent === selected || f.toEvent === selected);
      if (!hot && !scene.allFlows) continue;
      const a = scene.layout.byKey.get(f.fromTrack);
      const b = scene.layout.byKey.get(f.toTrack);
      if (!a || !b || a.collapsed || b.collapsed) continue;
      const x0 = timeToX(scene.view, f.fromMs);
      const x1 = timeToX(scene.view, f.toMs);
      if (Math.max(x0, x1) < 0 || Math.min(x0, x1) > scene.view.widthPx) continue;
      const y0 = laneCentre(a, depth.get(f.fromEvent) ?? 0);
      const y1 = laneCentre(b, depth.get(f.toEvent) ?? 0);
      this.flowsDrawn++;
      drawArrow(ctx, x0, y0, x1, y1, hot ? scene.theme.accent : scene.theme.muted, hot ? 2 : 1);
    }
  }

  private drawSelection(scene: Scene): void {
    const s = scene.selection;
    if (!s || !s.trackKey) return;
    const track = scene.layout.byKey.get(s.trackKey);
    if (!track) return;
    const x0 = timeToX(scene.view, s.startMs);
    const x1 = Math.max(timeToX(scene.view, s.endMs), x0 + 1);
    const y = track.y + Math.min(s.depth, track.lanes - 1) * LANE_PX;
    const { ctx } = this;
    ctx.strokeStyle = scene.theme.accent;
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 - 1, y - 1, x1 - x0 + 2, LANE_PX + 1);
  }

  private drawRange(scene: Scene, top: number, height: number): void {
    const spans: [number, number][] = [];
    if (scene.range) spans.push([timeToX(scene.view, scene.range.startMs), timeToX(scene.view, scene.range.endMs)]);
    if (scene.dragRange) spans.push([scene.dragRange.x0, scene.dragRange.x1]);
    const { ctx } = this;
    for (const [a, b] of spans) {
      const x0 = GUTTER_PX + Math.max(0, Math.min(a, b));
      const x1 = GUTTER_PX + Math.min(scene.view.widthPx, Math.max(a, b));
      if (x1 <= x0) continue;
      ctx.fillStyle = scene.theme.focus;
      ctx.globalAlpha = 0.12;
      ctx.fillRect(x0, top, x1 - x0, height);
      ctx.globalAlpha = 1;
      ctx.fillStyle = scene.theme.focus;
      ctx.fillRect(x0, top, 1, height);
      ctx.fillRect(x1 - 1, top, 1, height);
    }
  }

  private drawGutter(scene: Scene, groups: Layout['groups'], tracks: readonly LayoutTrack[], top: number): void {
    const { ctx } = this;
    const { theme, widthPx, heightPx, scrollTop } = scene;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, widthPx, heightPx - top);
    ctx.clip();
    ctx.fillStyle = theme.surface;
    ctx.fillRect(0, top, GUTTER_PX, heightPx - top);
    ctx.fillStyle = theme.border;
    ctx.fillRect(GUTTER_PX - 1, top, 1, heightPx - top);
    ctx.textBaseline = 'middle';
    ctx.font = FONT;
    for (const t of tracks) {
      const y = top + t.y - scrollTop;
      const marker = t.lanes > 1 || t.collapsed ? (t.collapsed ? '▸ ' : '▾ ') : '  ';
      ctx.fillStyle = t.collapsed ? theme.muted : theme.text;
      ctx.fillText(fitLabel(marker + t.name, GUTTER_PX - 12, this.charPx, 0), 12, y + LANE_PX / 2);
    }
    ctx.font = BOLD_FONT;
    for (const g of groups) {
      const y = top + g.y - scrollTop;
      ctx.fillStyle = theme.surface2;
      ctx.fillRect(0, y, widthPx, GROUP_HEADER_PX);
      ctx.fillStyle = theme.border;
      ctx.fillRect(0, y + GROUP_HEADER_PX - 1, widthPx, 1);
      ctx.fillStyle = theme.text;
      const title = `${g.collapsed ? '▸' : '▾'} ${g.name} (pid ${g.pid})`;
      ctx.fillText(fitLabel(title, widthPx - 8, this.charPx * 1.05, 0), 4, y + GROUP_HEADER_PX / 2);
    }
    ctx.restore();
  }

  private drawRuler(scene: Scene): void {
    const { ctx } = this;
    const { theme, widthPx, view } = scene;
    ctx.fillStyle = theme.surface;
    ctx.fillRect(0, 0, widthPx, RULER_PX);
    ctx.fillStyle = theme.border;
    ctx.fillRect(0, RULER_PX - 1, widthPx, 1);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.fillStyle = theme.muted;
    ctx.fillText(formatDuration(view.endMs - view.startMs) + ' shown', 8, RULER_PX / 2);
    ctx.save();
    ctx.beginPath();
    ctx.rect(GUTTER_PX, 0, view.widthPx, scene.heightPx);
    ctx.clip();
    for (const tick of ticks(view, scene.originMs)) {
      const x = GUTTER_PX + Math.round(tick.x) + 0.5;
      ctx.fillStyle = theme.border;
      ctx.fillRect(x - 0.5, RULER_PX - 8, 1, 8);
      ctx.globalAlpha = 0.35;
      ctx.fillRect(x - 0.5, RULER_PX, 1, scene.heightPx - RULER_PX);
      ctx.globalAlpha = 1;
      ctx.fillStyle = theme.text;
      ctx.fillText(tick.label, x + 3, RULER_PX / 2 - 2);
    }
    const times = scene.matchTimes;
    if (times && times.length) {
      ctx.fillStyle = theme.accent;
      let i = lowerBound(times, view.startMs);
      let last = -1;
      for (; i < times.length && times[i] <= view.endMs; i++) {
        const x = GUTTER_PX + Math.round(timeToX(view, times[i]));
        if (x === last) continue;
        last = x;
        ctx.fillRect(x - 1, RULER_PX - 5, 2, 5);
      }
    }
    ctx.restore();
  }

  private drawScrollbar(scene: Scene, top: number, height: number): void {
    const total = scene.layout.totalHeight;
    if (total <= height) return;
    const { ctx } = this;
    const thumb = Math.max(20, (height * height) / total);
    const y = top + (scene.scrollTop / (total - height)) * (height - thumb);
    ctx.fillStyle = scene.theme.muted;
    ctx.globalAlpha = 0.5;
    ctx.fillRect(scene.widthPx - 6, y, 4, thumb);
    ctx.globalAlpha = 1;
  }

  private drawTooltip(scene: Scene, tip: { x: number; y: number; lines: string[] }): void {
    const { ctx } = this;
    ctx.font = FONT;
    const width = Math.min(420, Math.max(...tip.lines.map((l) => ctx.measureText(l).width)) + 16);
    const height = tip.lines.length * 16 + 8;
    let x = tip.x + 14;
    let y = tip.y + 14;
    if (x + width > scene.widthPx) x = Math.max(0, tip.x - width - 8);
    if (y + height > scene.heightPx) y = Math.max(0, tip.y - height - 8);
    ctx.fillStyle = scene.theme.surface2;
    ctx.strokeStyle = scene.theme.border;
    ctx.lineWidth = 1;
    ctx.fillRect(x, y, width, height);
    ctx.strokeRect(x + 0.5, y + 0.5, width - 1, height - 1);
    ctx.fillStyle = scene.theme.text;
    ctx.textBaseline = 'middle';
    tip.lines.forEach((line, i) => ctx.fillText(fitLabel(line, width - 8, this.charPx * 1.02, 0), x + 8, y + 12 + i * 16));
  }
}

function lowerBound(values: Float64Array, target: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
