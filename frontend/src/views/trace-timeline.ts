/**
 * `<pf-trace-timeline>`: the canvas of the trace viewer. It turns pointer, wheel and keys into
 * TimelineModel calls and draws the model with TimelineRenderer once per animation frame when
 * something changed. No DOM node per event; the canvas is sized in device pixels.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property, query } from 'lit/decorators.js';
import type { ThemeName } from '../trace/colors';
import { palette } from '../trace/colors';
import { counterTooltip, isCounter } from '../trace/counter-track';
import { findEvent } from '../trace/hit-test';
import { heldStep, isHeld, keyAction, wheelZoomFactor, type HeldAction } from '../trace/keys';
import { LANE_PX } from '../trace/layout';
import { GUTTER_PX, RULER_PX, TimelineRenderer, type Scene, type Theme } from '../trace/renderer';
import { formatDuration } from '../format';
import type { TimelineModel } from '../trace/timeline-model';
import { timeToX } from '../trace/viewport';

export const TRACE_TIMELINE_TAG = 'pf-trace-timeline';

/** Room left under the canvas at the bottom of the window. */
const VIEWPORT_MARGIN_PX = 12;
const DRAG_THRESHOLD_PX = 3;
const DRAW_SAMPLES = 600;

interface Drag {
  x: number;
  y: number;
  lastX: number;
  lastY: number;
  range: boolean;
  moved: boolean;
}

/** Actions the timeline does not handle itself (the view shows help, clears, fits...). */
export interface TimelineKeyDetail {
  action: 'help' | 'escape';
}

@customElement(TRACE_TIMELINE_TAG)
export class TraceTimeline extends LitElement {
  @property({ attribute: false }) model!: TimelineModel;
  @query('canvas') private canvas!: HTMLCanvasElement;
  /** Milliseconds spent in each recent draw (read by the browser test). */
  readonly drawTimes: number[] = [];
  private renderer: TimelineRenderer | null = null;

  /** Flow arrows in the last frame (for tests). */
  get flowsDrawn(): number {
    return this.renderer?.flowsDrawn ?? 0;
  }

  /** Counter charts drawn in the last frame (read by the browser tests). */
  get countersDrawn(): number {
    return this.renderer?.countersDrawn ?? 0;
  }
  private frame = 0;
  private heldFrame = 0;
  private lastHeldTime = 0;
  private readonly held = new Set<HeldAction>();
  private drag: Drag | null = null;
  private pointer: { x: number; y: number } | null = null;
  private dragRange: { x0: number; x1: number } | null = null;
  private theme: Theme | null = null;
  private cssWidth = 0;
  private cssHeight = 0;
  private dpr = 1;
  private resizeObserver: ResizeObserver | null = null;
  private dprQuery: MediaQueryList | null = null;
  private readonly darkQuery = window.matchMedia('(prefers-color-scheme: dark)');

  static override styles = css`
    :host {
      display: block;
      position: relative;
      height: max(320px, calc(100vh - 330px));
      border: 1px solid var(--pf-border);
      border-radius: var(--pf-radius);
      overflow: hidden;
      touch-action: none;
    }
    canvas {
      display: block;
      width: 100%;
      height: 100%;
      cursor: default;
    }
    canvas:focus-visible {
      outline: 2px solid var(--pf-focus);
      outline-offset: -2px;
    }
    canvas.grabbing {
      cursor: grabbing;
    }
  `;

  override render() {
    return html`<canvas
      tabindex="0"
      role="img"
      aria-label="Trace timeline. Press ? for keyboard shortcuts."
      @pointerdown=${this.onPointerDown}
      @pointermove=${this.onPointerMove}
      @pointerup=${this.onPointerUp}
      @pointercancel=${this.onPointerCancel}
      @pointerleave=${this.onPointerLeave}
    ></canvas>`;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('keydown', this.onKeyDown);
    window.addEventListener('keyup', this.onKeyUp);
    window.addEventListener('blur', this.onBlur);
    window.addEventListener('resize', this.onDprChange);
    this.darkQuery.addEventListener('change', this.onThemeChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('keydown', this.onKeyDown);
    window.removeEventListener('keyup', this.onKeyUp);
    window.removeEventListener('blur', this.onBlur);
    window.removeEventListener('resize', this.onDprChange);
    this.darkQuery.removeEventListener('change', this.onThemeChange);
    this.resizeObserver?.disconnect();
    this.dprQuery?.removeEventListener('change', this.onDprChange);
    cancelAnimationFrame(this.frame);
    cancelAnimationFrame(this.heldFrame);
  }

  override firstUpdated(): void {
    const ctx = this.canvas.getContext('2d', { alpha: false });
    if (ctx) this.renderer = new TimelineRenderer(ctx);
    this.canvas.addEventListener('wheel', this.onWheel, { passive: false });
    this.resizeObserver = new ResizeObserver(() => this.measure());
    this.resizeObserver.observe(this);
    requestAnimationFrame(() => this.fitViewport()); // after the toolbar above has its height
    this.measure();
  }

  /** Schedules a redraw on the next animation frame (many calls, one draw). */
  requestDraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  focusCanvas(): void {
    this.canvas?.focus({ preventScroll: true });
  }

  /** Where an event is drawn, in client (viewport) pixels; null when it is not in view. */
  locateEvent(event: number): { x: number; y: number; width: number; height: number } | null {
    const m = this.model;
    const { primary } = m.windows();
    const rect = this.canvas.getBoundingClientRect();
    let span: { startMs: number; endMs: number; key: string; depth: number } | null = null;
    const ref = primary ? findEvent(primary, event) : null;
    if (ref) span = { startMs: ref.track.beginMs[ref.index], endMs: ref.track.endMs[ref.index], key: ref.track.key, depth: ref.track.depth[ref.index] };
    else if (m.selection?.event === event && m.selection.trackKey) span = { ...m.selection, key: m.selection.trackKey };
    const track = span && m.layout.byKey.get(span.key);
    if (!span || !track) return null;
    const x0 = Math.max(0, timeToX(m.viewport, span.startMs));
    const x1 = Math.min(m.widthPx, Math.max(timeToX(m.viewport, span.endMs), x0 + 1));
    const y = RULER_PX + track.y + Math.min(span.depth, track.lanes - 1) * LANE_PX - m.scrollTop;
    if (x1 <= 0 || x0 >= m.widthPx || y < RULER_PX || y > this.cssHeight) return null;
    return { x: rect.left + GUTTER_PX + x0, y: rect.top + y, width: x1 - x0, height: LANE_PX };
  }

  private measure(): void {
    const rect = this.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(GUTTER_PX + 50, Math.floor(rect.width - 2));
    const height = Math.max(RULER_PX + 50, Math.floor(rect.height - 2));
    if (width === this.cssWidth && height === this.cssHeight && dpr === this.dpr) return;
    this.cssWidth = width;
    this.cssHeight = height;
    if (dpr !== this.dpr || !this.dprQuery) this.watchDpr(dpr);
    this.dpr = dpr;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.model.setSize(width - GUTTER_PX, height - RULER_PX);
    this.draw();
  }

  /** Moving the window to a screen with another pixel ratio (or browser zoom) re-sizes the canvas. */
  private watchDpr(dpr: number): void {
    this.dprQuery?.removeEventListener('change', this.onDprChange);
    this.dprQuery = window.matchMedia(`(resolution: ${dpr}dppx)`);
    this.dprQuery.addEventListener('change', this.onDprChange);
  }

  private readonly onDprChange = () => {
    this.fitViewport();
    this.measure();
  };

  /**
   * The canvas reaches the bottom of the window, whatever sits above it (a fixed `100vh - N`
   * left ~180 px blank at 1366x768); never shorter than 320 px.
   */
  private fitViewport(): void {
    const top = this.getBoundingClientRect().top + window.scrollY;
    this.style.height = `${Math.max(320, Math.floor(window.innerHeight - top - VIEWPORT_MARGIN_PX))}px`;
  }

  private draw(): void {
    if (!this.renderer || !this.model) return;
    if ((window.devicePixelRatio || 1) !== this.dpr) return this.measure();
    const started = performance.now();
    const m = this.model;
    const { primary, fallback } = m.windows();
    const scene: Scene = {
      widthPx: this.cssWidth,
      heightPx: this.cssHeight,
      dpr: this.dpr,
      view: m.viewport,
      originMs: m.full?.startMs ?? 0,
      scrollTop: m.scrollTop,
      layout: m.layout,
      primary,
      fallback,
      selection: m.selection,
      range: m.range,
      matches: m.search?.keys,
      matchTimes: m.search?.times,
      tooltip: this.tooltip(),
      dragRange: this.dragRange,
      theme: this.resolveTheme(),
      allFlows: m.allFlows,
    };
    this.renderer.draw(scene);
    this.drawTimes.push(performance.now() - started);
    if (this.drawTimes.length > DRAW_SAMPLES) this.drawTimes.shift();
  }

  private resolveTheme(): Theme {
    if (this.theme) return this.theme;
    const style = getComputedStyle(this);
    const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    const name: ThemeName = this.darkQuery.matches ? 'dark' : 'light';
    this.theme = {
      name,
      background: v('--pf-bg', name === 'dark' ? '#16181d' : '#ffffff'),
      surface: v('--pf-surface', '#f6f7f9'),
      surface2: v('--pf-surface-2', '#eceef2'),
      border: v('--pf-border', '#d0d5dd'),
      text: v('--pf-text', '#1d2330'),
      muted: v('--pf-muted', '#5b6472'),
      accent: v('--pf-accent', '#c2410c'),
      focus: v('--pf-focus', '#2563eb'),
      palette: palette(name),
    };
    return this.theme;
  }

  private readonly onThemeChange = () => {
    this.theme = null;
    this.requestDraw();
  };

  private tooltip(): Scene['tooltip'] {
    const p = this.pointer;
    if (!p || this.drag?.moved) return null;
    const x = p.x - GUTTER_PX;
    const y = p.y - RULER_PX;
    if (x < 0 || y < 0) return null;
    const hit = this.model.hit(x, y);
    if (hit.kind !== 'item') return null;
    const track = hit.win.tracks.get(hit.trackKey)!;
    const i = hit.index;
    const name = hit.win.strings[track.name[i]] ?? '';
    const duration = formatDuration(track.endMs[i] - track.beginMs[i]);
    const start = formatDuration(track.beginMs[i] - (this.model.full?.startMs ?? 0));
    if (isCounter(track)) {
      const rowName = this.model.layout.byKey.get(hit.trackKey)?.name ?? '';
      return { x: p.x, y: p.y, lines: counterTooltip(hit.win, track, i, rowName, `${duration} at ${start}`) };
    }
    if (track.merged[i] > 1) {
      return { x: p.x, y: p.y, lines: [`${track.merged[i]} events — zoom in`, `first: ${name}`, `span ${duration} at ${start}`] };
    }
    return { x: p.x, y: p.y, lines: [name, `${duration} at ${start}`] };
  }

  // ── pointer ─────────────────────────────────────────────────────────────────

  private local(event: MouseEvent): { x: number; y: number } {
    const rect = this.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private readonly onPointerDown = (event: PointerEvent) => {
    if (event.button !== 0) return;
    this.focusCanvas();
    const p = this.local(event);
    this.canvas.setPointerCapture(event.pointerId);
    this.drag = { x: p.x, y: p.y, lastX: p.x, lastY: p.y, range: event.shiftKey && p.x >= GUTTER_PX, moved: false };
  };

  private readonly onPointerMove = (event: PointerEvent) => {
    const p = this.local(event);
    this.pointer = p;
    const drag = this.drag;
    if (drag) {
      if (!drag.moved && Math.hypot(p.x - drag.x, p.y - drag.y) < DRAG_THRESHOLD_PX) return;
      drag.moved = true;
      if (drag.range) {
        this.dragRange = { x0: drag.x - GUTTER_PX, x1: p.x - GUTTER_PX };
      } else {
        this.canvas.classList.add('grabbing');
        this.model.panPx(drag.lastX - p.x);
        this.model.scrollBy(drag.lastY - p.y);
      }
      drag.lastX = p.x;
      drag.lastY = p.y;
    }
    this.requestDraw();
  };

  private readonly onPointerUp = (event: PointerEvent) => {
    const drag = this.drag;
    this.drag = null;
    this.canvas.classList.remove('grabbing');
    if (!drag) return;
    const p = this.local(event);
    if (!drag.moved) {
      this.model.click(p.x - GUTTER_PX, p.y - RULER_PX);
    } else if (drag.range && this.dragRange) {
      const m = this.model;
      const t0 = m.viewport.startMs + (Math.min(this.dragRange.x0, this.dragRange.x1) / m.widthPx) * (m.span.endMs - m.span.startMs);
      const t1 = m.viewport.startMs + (Math.max(this.dragRange.x0, this.dragRange.x1) / m.widthPx) * (m.span.endMs - m.span.startMs);
      m.setRange({ startMs: t0, endMs: t1, tracks: m.tracksBetween(drag.y - RULER_PX, p.y - RULER_PX) });
    }
    this.dragRange = null;
    this.requestDraw();
  };

  private readonly onPointerCancel = () => {
    this.drag = null;
    this.dragRange = null;
    this.canvas.classList.remove('grabbing');
    this.requestDraw();
  };

  private readonly onPointerLeave = () => {
    if (this.drag) return;
    this.pointer = null;
    this.requestDraw();
  };

  private readonly onWheel = (event: WheelEvent) => {
    event.preventDefault();
    const p = this.local(event);
    const m = this.model;
    if (event.ctrlKey || event.metaKey) {
      m.zoom(wheelZoomFactor(event.deltaY, event.deltaMode), (p.x - GUTTER_PX) / m.widthPx);
      return;
    }
    const scale = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? this.cssHeight : 1;
    const dx = event.shiftKey && !event.deltaX ? event.deltaY : event.deltaX;
    const dy = event.shiftKey ? 0 : event.deltaY;
    if (dx) m.panPx(dx * scale);
    if (dy) m.scrollBy(dy * scale);
  };

  // ── keys ────────────────────────────────────────────────────────────────────

  private typingIn(event: KeyboardEvent): boolean {
    return event.composedPath().some((target) => target instanceof HTMLElement && (target.matches('input, textarea, select') || target.isContentEditable));
  }

  private readonly onKeyDown = (event: KeyboardEvent) => {
    if (event.ctrlKey || event.metaKey || event.altKey || this.typingIn(event)) return;
    const action = keyAction(event.key);
    if (!action) return;
    const m = this.model;
    event.preventDefault();
    if (isHeld(action)) {
      if (!this.held.has(action)) {
        this.held.add(action);
        this.startHeldLoop();
      }
      return;
    }
    switch (action) {
      case 'scroll-up':
        return m.scrollBy(-LANE_PX * 3);
      case 'scroll-down':
        return m.scrollBy(LANE_PX * 3);
      case 'fit':
        return m.fit();
      case 'reset':
        return m.reset();
      case 'mark':
        return m.markSelection();
      case 'help':
      case 'escape':
        this.dispatchEvent(new CustomEvent<TimelineKeyDetail>('pf-trace-key', { detail: { action }, bubbles: true, composed: true }));
        return;
    }
  };

  private readonly onKeyUp = (event: KeyboardEvent) => {
    const action = keyAction(event.key);
    if (action && isHeld(action)) this.held.delete(action);
  };

  private readonly onBlur = () => this.held.clear();

  /** While W/A/S/D are down, zoom and pan every frame by the time since the last one. */
  private startHeldLoop(): void {
    if (this.heldFrame) return;
    this.lastHeldTime = performance.now();
    const tick = (now: number) => {
      if (!this.held.size) {
        this.heldFrame = 0;
        return;
      }
      const { zoom, pan } = heldStep(this.held, now - this.lastHeldTime);
      this.lastHeldTime = now;
      const m = this.model;
      const anchor = this.pointer && this.pointer.x >= GUTTER_PX ? (this.pointer.x - GUTTER_PX) / m.widthPx : 0.5;
      if (zoom !== 1) m.zoom(zoom, anchor);
      if (pan !== 0) m.pan(pan);
      this.heldFrame = requestAnimationFrame(tick);
    };
    this.heldFrame = requestAnimationFrame(tick);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-trace-timeline': TraceTimeline;
  }
}
