/**
 * Level-of-detail loading: the timeline says which span it shows (`want`), the loader decides
 * whether a window it already has is good enough, and otherwise asks the backend for exactly that
 * span at the screen's resolution — once the view has been still for `debounceMs`, aborting the
 * request it supersedes. Recent answers stay in a small LRU, and the first (whole-trace) answer
 * is kept apart as the overview, so there is always something to draw while a window loads.
 *
 *   const loader = new WindowLoader((request, signal) => fetchWindow(request, signal));
 *   loader.onLoad = () => redraw();
 *   loader.want({ startMs, endMs, resolution: widthPx });
 *   draw(loader.best(span, filter));   // cheap: called every frame
 */
import { filterKey, type TraceWindow, type WindowRequest } from './contract';
import { Lru } from './lru';
import { spanOf, type TimeSpan } from './viewport';

export type FetchWindow = (request: WindowRequest, signal: AbortSignal) => Promise<TraceWindow>;

export interface Timers {
  set: (callback: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
}

const realTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Same span and row filter, the same or finer pixels, and nothing dropped by the cap. */
export function serves(win: TraceWindow, request: WindowRequest): boolean {
  if (win.truncated) return false;
  if (win.filter !== '' && win.filter !== filterKey(request)) return false;
  const eps = Math.max(spanOf(request), 1e-12) * 1e-9;
  if (win.startMs > request.startMs + eps || win.endMs < request.endMs - eps) return false;
  if (win.pixelMs === 0) return true;
  const wantedPixel = spanOf(request) / Math.max(1, request.resolution);
  return win.pixelMs <= wantedPixel * 1.05;
}

/** Fraction of `span` that `win` covers. */
export function coverage(win: TraceWindow, span: TimeSpan): number {
  const width = spanOf(span);
  if (!(width > 0)) return win.startMs <= span.startMs && win.endMs >= span.endMs ? 1 : 0;
  const covered = Math.min(win.endMs, span.endMs) - Math.max(win.startMs, span.startMs);
  return Math.max(0, covered) / width;
}

/**
 * The window to draw `span` from: coverage counts, and so does being at the same zoom (a window
 * ten times wider or narrower loses as much as half the coverage). The renderer fills what
 * the pick does not cover from the overview.
 */
export function pickWindow(windows: readonly TraceWindow[], span: TimeSpan, filter: string): TraceWindow | undefined {
  let best: TraceWindow | undefined;
  let bestScore = -Infinity;
  for (const win of windows) {
    if (win.filter !== '' && win.filter !== filter) continue;
    const cover = coverage(win, span);
    if (cover <= 0) continue;
    const zoomRatio = spanOf(win) / Math.max(spanOf(span), 1e-12);
    // Coverage dominates; among full covers the one closest in zoom (log scale) wins.
    const score = cover * 2 - Math.abs(Math.log10(Math.max(zoomRatio, 1e-12)));
    if (score > bestScore) {
      best = win;
      bestScore = score;
    }
  }
  return best;
}

export function requestKey(request: WindowRequest): string {
  return [request.startMs, request.endMs, request.resolution, filterKey(request), request.maxEvents ?? ''].join('|');
}

export class WindowLoader {
  /** Called with every window that arrives (not with cache hits). */
  onLoad: (win: TraceWindow) => void = () => {};
  onError: (error: unknown) => void = () => {};
  overview: TraceWindow | null = null;
  /** Requests sent, newest last (the e2e test and the status line read this). */
  readonly sent: WindowRequest[] = [];
  private readonly cache: Lru<string, TraceWindow>;
  private timer: unknown = null;
  private inflight: { key: string; abort: AbortController } | null = null;
  private wanted: WindowRequest | null = null;

  constructor(
    private readonly fetchWindow: FetchWindow,
    private readonly debounceMs = 100,
    capacity = 8,
    private readonly timers: Timers = realTimers,
  ) {
    this.cache = new Lru(capacity);
  }

  get loading(): boolean {
    return this.inflight !== null || this.timer !== null;
  }

  /** Loads the whole trace at once (no debounce); its answer becomes the overview. */
  async loadOverview(request: WindowRequest): Promise<TraceWindow> {
    const abort = new AbortController();
    this.sent.push(request);
    const win = await this.fetchWindow(request, abort.signal);
    this.overview = win;
    this.cache.set(requestKey(request), win);
    return win;
  }

  /** Asks for `request` unless a cached window serves it; returns that window if so. */
  want(request: WindowRequest): TraceWindow | undefined {
    const hit = this.cachedFor(request);
    this.wanted = hit ? null : request;
    if (this.timer !== null) {
      this.timers.clear(this.timer);
      this.timer = null;
    }
    if (hit) return hit;
    if (this.inflight?.key === requestKey(request)) return undefined;
    this.timer = this.timers.set(() => {
      this.timer = null;
      void this.send();
    }, this.debounceMs);
    return undefined;
  }

  /** The best window to draw `span` from (overview included). */
  best(span: TimeSpan, filter: string): TraceWindow | undefined {
    const candidates = this.cache.values();
    if (this.overview && !candidates.includes(this.overview)) candidates.push(this.overview);
    return pickWindow(candidates, span, filter);
  }

  cachedFor(request: WindowRequest): TraceWindow | undefined {
    const exact = this.cache.get(requestKey(request));
    if (exact) return exact;
    return this.cache.values().find((win) => serves(win, request));
  }

  dispose(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
    this.inflight?.abort.abort();
    this.inflight = null;
    this.wanted = null;
  }

  private async send(): Promise<void> {
    const request = this.wanted;
    if (!request) return;
    this.wanted = null;
    const key = requestKey(request);
    this.inflight?.abort.abort();
    const abort = new AbortController();
    this.inflight = { key, abort };
    this.sent.push(request);
    try {
      const win = await this.fetchWindow(request, abort.signal);
      if (abort.signal.aborted) return;
      this.cache.set(key, win);
      this.onLoad(win);
    } catch (error) {
      if (!abort.signal.aborted) this.onError(error);
    } finally {
      if (this.inflight?.abort === abort) this.inflight = null;
    }
  }
}
