/**
 * The timeline's state and every user action on it, without the DOM: the visible span and
 * scroll, the rows (processes/threads from the answers' metadata, collapsible), the selected
 * event and its details, the range selection, the search. The component forwards input here,
 * redraws on `onRedraw` and re-renders its panels on `onChange`.
 *
 * Coordinates are CSS pixels of the tracks area: x = 0 at the left end of the time axis,
 * y = 0 below the ruler.
 *
 *   const model = new TimelineModel(apiTraceSource(api, run, host));
 *   model.setSize(1500, 600);
 *   await model.start(readTraceUrl(location.search));
 *   model.zoom(0.8, mouseX / model.widthPx);
 */
import { isAbortError } from '../api';
import { filterKey, trackKey, type DetailsAnswer, type ProcessInfo, type ThreadInfo, type TraceWindow, type WindowRequest } from './contract';
import { COUNTER_LANES, isCounter } from './counter-track';
import { itemAt } from './hit-test';
import { buildLayout, hitLayout, maxScroll, rowFilter, scrollToReveal, type CollapseState, type Layout } from './layout';
import { rangeStats, type RangeStats } from './range-stats';
import { firstMatch, nextMatch, searchState, type SearchState } from './search-state';
import type { TraceSource } from './source';
import type { TraceUrlState } from './url-state';
import { WindowLoader } from './window-loader';
import { clampSpan, fitSpan, panBy, pixelMs, spanOf, xToTime, zoomAt, type TimeSpan, type Viewport } from './viewport';

export interface EventSelection {
  event: number;
  trackKey: string;
  depth: number;
  startMs: number;
  endMs: number;
  name: string;
  details: DetailsAnswer | null;
  error: string;
}

export interface RangeSelection extends TimeSpan {
  /** Tracks the range covers; null = all. */
  tracks: Set<string> | null;
}

/** What is under the pointer. */
export type TimelineHit =
  | { kind: 'group'; pid: number }
  | { kind: 'track-name'; key: string }
  | { kind: 'item'; win: TraceWindow; trackKey: string; index: number; depth: number }
  | { kind: 'empty'; trackKey?: string };

export type Phase = 'loading' | 'ready' | 'empty' | 'error';

/** Share of the view an event gets when we jump to it. */
const JUMP_MARGIN = 0.35;

export class TimelineModel {
  phase: Phase = 'loading';
  message = '';
  full: TimeSpan | null = null;
  span: TimeSpan = { startMs: 0, endMs: 1 };
  widthPx = 1000;
  heightPx = 400;
  scrollTop = 0;
  layout: Layout = buildLayout([], [], new Map());
  readonly collapsed: { pids: Set<number>; tracks: Set<string> } = { pids: new Set(), tracks: new Set() };
  selection: EventSelection | null = null;
  range: RangeSelection | null = null;
  search: SearchState | null = null;
  searchBusy = false;
  searchError = '';
  /** Draw every flow arrow in view, not only the selected event's. */
  allFlows = false;
  readonly loader: WindowLoader;
  onRedraw: () => void = () => {};
  onChange: () => void = () => {};
  /** The span or the selection changed (the component mirrors them in the URL). */
  onViewChange: () => void = () => {};

  private readonly processes = new Map<number, ProcessInfo>();
  private readonly threads = new Map<string, ThreadInfo>();
  private readonly depths = new Map<string, number>();
  private detailsAbort: AbortController | null = null;
  private searchAbort: AbortController | null = null;

  constructor(
    private readonly source: TraceSource,
    debounceMs = 100,
  ) {
    this.loader = new WindowLoader((request, signal) => source.window(request, signal), debounceMs);
    this.loader.onLoad = (win) => {
      this.absorb(win);
      this.onRedraw();
      this.onChange();
    };
    this.loader.onError = (error) => {
      this.message = error instanceof Error ? error.message : 'A window of the trace could not be loaded.';
      this.onChange();
    };
  }

  get viewport(): Viewport {
    return { ...this.span, widthPx: this.widthPx };
  }

  get filter(): string {
    return filterKey(rowFilter(this.layout, this.collapsed));
  }

  /** Loads the whole trace (the overview), then the window and event from the URL. */
  async start(initial: TraceUrlState = {}): Promise<void> {
    this.phase = 'loading';
    this.onChange();
    const overview = await this.loader.loadOverview({ startMs: -Infinity, endMs: Infinity, resolution: this.widthPx });
    this.full = { startMs: overview.fullStartMs, endMs: Math.max(overview.fullEndMs, overview.fullStartMs + 1e-6) };
    this.absorb(overview);
    this.phase = overview.tracks.size || this.layout.tracks.length ? 'ready' : 'empty';
    const wanted = initial.startMs !== undefined && initial.endMs !== undefined ? { startMs: initial.startMs, endMs: initial.endMs } : this.full;
    this.span = clampSpan(wanted, this.full);
    this.requestWindow();
    this.onRedraw();
    this.onChange();
    if (initial.event !== undefined) await this.selectEvent(initial.event, { reveal: initial.startMs === undefined, quiet: true });
  }

  dispose(): void {
    this.loader.dispose();
    this.detailsAbort?.abort();
    this.searchAbort?.abort();
  }

  setSize(widthPx: number, heightPx: number): void {
    const width = Math.max(50, Math.round(widthPx));
    const changed = width !== this.widthPx;
    this.widthPx = width;
    this.heightPx = Math.max(50, heightPx);
    this.scrollTop = Math.min(this.scrollTop, maxScroll(this.layout, this.heightPx));
    if (changed && this.full) this.requestWindow();
    this.onRedraw();
  }

  // ── view ────────────────────────────────────────────────────────────────────

  setSpan(span: TimeSpan): void {
    if (!this.full) return;
    this.span = clampSpan(span, this.full);
    this.requestWindow();
    this.onRedraw();
    this.onViewChange();
  }

  /** `factor` < 1 zooms in, keeping the time at `anchor` (0..1 of the width) in place. */
  zoom(factor: number, anchor = 0.5): void {
    if (this.full) this.setSpan(zoomAt(this.span, factor, anchor, this.full));
  }

  /** Pans by a fraction of the visible span (positive = later). */
  pan(fraction: number): void {
    if (this.full) this.setSpan(panBy(this.span, fraction * spanOf(this.span), this.full));
  }

  panPx(dx: number): void {
    this.pan(dx / this.widthPx);
  }

  scrollBy(dy: number): void {
    this.scrollTo(this.scrollTop + dy);
  }

  scrollTo(y: number): void {
    const next = Math.max(0, Math.min(y, maxScroll(this.layout, this.heightPx)));
    if (next === this.scrollTop) return;
    this.scrollTop = next;
    this.onRedraw();
  }

  setAllFlows(on: boolean): void {
    this.allFlows = on;
    this.onRedraw();
    this.onChange();
  }

  reset(): void {
    if (this.full) this.setSpan(this.full);
  }

  /** F: the range selection if any, else the selected event. */
  fit(): void {
    if (!this.full) return;
    const target = this.range ?? this.selection;
    if (target) this.setSpan(fitSpan(target, this.full, 0.05));
  }

  toggleGroup(pid: number): void {
    if (this.collapsed.pids.has(pid)) this.collapsed.pids.delete(pid);
    else this.collapsed.pids.add(pid);
    this.relayout();
  }

  toggleTrack(key: string): void {
    if (this.collapsed.tracks.has(key)) this.collapsed.tracks.delete(key);
    else this.collapsed.tracks.add(key);
    this.relayout();
  }

  /** The window to draw, and the overview behind it where the window does not reach. */
  windows(): { primary?: TraceWindow; fallback?: TraceWindow } {
    const primary = this.loader.best(this.span, this.filter);
    const overview = this.loader.overview ?? undefined;
    return { primary, fallback: overview !== primary ? overview : undefined };
  }

  // ── pointer ─────────────────────────────────────────────────────────────────

  /** What is at tracks-area (x, y); x < 0 is the name gutter. */
  hit(x: number, y: number, tolerancePx = 2): TimelineHit {
    const at = hitLayout(this.layout, y + this.scrollTop);
    if (at.kind === 'group') return { kind: 'group', pid: at.group.pid };
    if (at.kind !== 'track') return { kind: 'empty' };
    if (x < 0) return { kind: 'track-name', key: at.track.key };
    if (at.track.collapsed) return { kind: 'empty', trackKey: at.track.key };
    const time = xToTime(this.viewport, x);
    const tolerance = tolerancePx * pixelMs(this.viewport);
    const { primary, fallback } = this.windows();
    for (const win of [primary, fallback]) {
      if (!win || time < win.startMs || time > win.endMs) continue;
      const track = win.tracks.get(at.track.key);
      const depth = isCounter(track) ? 0 : at.depth; // a counter's samples fill its whole height
      const index = track ? itemAt(track, depth, time, tolerance) : -1;
      if (track && index >= 0) return { kind: 'item', win, trackKey: at.track.key, index, depth };
      if (win === primary) break; // the window covers this time: nothing there
    }
    return { kind: 'empty', trackKey: at.track.key };
  }

  /** A click: toggles groups and tracks, selects an event, or clears the selection. */
  click(x: number, y: number): void {
    const hit = this.hit(x, y);
    if (hit.kind === 'group') return this.toggleGroup(hit.pid);
    if (hit.kind === 'track-name') return this.toggleTrack(hit.key);
    if (hit.kind === 'item') {
      const track = hit.win.tracks.get(hit.trackKey)!;
      const i = hit.index;
      if (track.merged[i] > 1) {
        // A box of many events: zoom into it rather than select its first member.
        if (this.full) this.setSpan(fitSpan({ startMs: track.beginMs[i], endMs: track.endMs[i] }, this.full, 0.05));
        return;
      }
      void this.selectEvent(track.event[i], {
        reveal: false,
        known: { trackKey: hit.trackKey, depth: track.depth[i], startMs: track.beginMs[i], endMs: track.endMs[i], name: hit.win.strings[track.name[i]] ?? '' },
      });
      return;
    }
    this.clearSelection();
  }

  /** Tracks overlapping tracks-area y0..y1 (for a range drag). */
  tracksBetween(y0: number, y1: number): Set<string> {
    const top = Math.min(y0, y1) + this.scrollTop;
    const bottom = Math.max(y0, y1) + this.scrollTop;
    return new Set(this.layout.tracks.filter((t) => t.y + t.height >= top && t.y <= bottom).map((t) => t.key));
  }

  setRange(range: RangeSelection | null): void {
    this.range = range && range.endMs > range.startMs ? range : null;
    this.onRedraw();
    this.onChange();
  }

  /** M: the selected event's span on its track becomes the range (again: clears it). */
  markSelection(): void {
    const s = this.selection;
    if (!s) return;
    const same = this.range && this.range.startMs === s.startMs && this.range.endMs === s.endMs;
    this.setRange(same ? null : { startMs: s.startMs, endMs: s.endMs, tracks: new Set([s.trackKey]) });
  }

  rangeStats(): RangeStats | null {
    if (!this.range) return null;
    const win = this.loader.best(this.range, this.filter);
    return win ? rangeStats(win, this.range, this.range.tracks) : null;
  }

  // ── selection ───────────────────────────────────────────────────────────────

  clearSelection(): void {
    if (!this.selection) return;
    this.detailsAbort?.abort();
    this.selection = null;
    this.onRedraw();
    this.onChange();
    this.onViewChange();
  }

  /**
   * Selects an event and loads its details. With `reveal`, expands its process, centres and
   * zooms on it and scrolls its row into view (search results, flow links, shared links).
   * With `quiet` (an event from the URL, perhaps of another run), an unknown event is dropped
   * instead of shown as an error.
   */
  async selectEvent(
    event: number,
    options: { reveal: boolean; quiet?: boolean; known?: Omit<EventSelection, 'event' | 'details' | 'error'> },
  ): Promise<void> {
    this.detailsAbort?.abort();
    const abort = new AbortController();
    this.detailsAbort = abort;
    const known = options.known ?? { trackKey: '', depth: 0, startMs: 0, endMs: 0, name: '' };
    this.selection = { event, ...known, details: null, error: '' };
    this.onRedraw();
    this.onChange();
    this.onViewChange();
    try {
      const details = await this.source.details(event, abort.signal);
      if (abort.signal.aborted || this.selection?.event !== event) return;
      const startMs = details.ts / 1000;
      this.selection = {
        event,
        trackKey: trackKey(details.pid, details.tid),
        depth: details.depth ?? 0,
        startMs,
        endMs: startMs + Math.max(0, details.dur) / 1000,
        name: details.name,
        details,
        error: '',
      };
      if (options.reveal) this.reveal(this.selection);
    } catch (error) {
      if (abort.signal.aborted || isAbortError(error)) return;
      if (this.selection?.event === event && options.quiet) {
        this.selection = null;
        this.onViewChange();
      } else if (this.selection?.event === event) {
        this.selection = { ...this.selection, error: error instanceof Error ? error.message : 'Could not load the event.' };
      }
    }
    this.onRedraw();
    this.onChange();
  }

  /** Centres and zooms on `target`, expanding its process and scrolling its row into view. */
  reveal(target: { trackKey: string; depth: number; startMs: number; endMs: number }): void {
    if (!this.full) return;
    const pid = Number(target.trackKey.split(':')[0]);
    if (this.collapsed.pids.delete(pid) || this.collapsed.tracks.delete(target.trackKey)) this.relayout();
    this.setSpan(fitSpan(target, this.full, JUMP_MARGIN));
    const track = this.layout.byKey.get(target.trackKey);
    if (track) this.scrollTo(scrollToReveal(track, target.depth, this.scrollTop, this.heightPx));
  }

  // ── search ──────────────────────────────────────────────────────────────────

  /** Enter in the search box: a new query searches; the same one steps to the next match. */
  async searchOrStep(query: string, direction: 1 | -1): Promise<void> {
    const text = query.trim();
    if (!text) {
      this.clearSearch();
      return;
    }
    if (this.search && this.search.query === text) return this.step(direction);
    this.searchAbort?.abort();
    const abort = new AbortController();
    this.searchAbort = abort;
    this.searchBusy = true;
    this.searchError = '';
    this.onChange();
    try {
      const result = await this.source.search(text, abort.signal);
      if (abort.signal.aborted) return;
      this.search = searchState(result);
      this.searchBusy = false;
      if (result.matches.length) this.goToMatch(firstMatch(this.search, this.span.startMs, direction));
    } catch (error) {
      if (abort.signal.aborted || isAbortError(error)) return;
      this.searchBusy = false;
      this.searchError = error instanceof Error ? error.message : 'Search failed.';
    }
    this.onRedraw();
    this.onChange();
  }

  step(direction: 1 | -1): void {
    if (this.search?.matches.length) this.goToMatch(nextMatch(this.search, direction));
  }

  clearSearch(): void {
    this.searchAbort?.abort();
    this.search = null;
    this.searchBusy = false;
    this.searchError = '';
    this.onRedraw();
    this.onChange();
  }

  private goToMatch(index: number): void {
    const s = this.search!;
    const match = s.matches[index];
    s.index = index;
    const target = { trackKey: trackKey(match.pid, match.tid), depth: 0, startMs: match.startMs, endMs: match.endMs };
    this.reveal(target);
    void this.selectEvent(match.event, { reveal: true, known: { ...target, name: match.name } });
  }

  // ── data ────────────────────────────────────────────────────────────────────

  private requestWindow(): void {
    const request: WindowRequest = { ...this.span, resolution: this.widthPx, ...rowFilter(this.layout, this.collapsed) };
    this.loader.want(request);
  }

  /** Learns rows and depths from an answer; heights only grow, so rows do not jump while panning. */
  private absorb(win: TraceWindow): void {
    let changed = false;
    for (const p of win.processes) {
      if (!this.processes.has(p.pid)) changed = true;
      this.processes.set(p.pid, p);
    }
    for (const t of win.threads) {
      const key = trackKey(t.pid, t.tid);
      if (!this.threads.has(key)) changed = true;
      this.threads.set(key, t);
    }
    for (const track of win.tracks.values()) {
      if (!this.threads.has(track.key)) {
        this.threads.set(track.key, { pid: track.pid, tid: track.tid, name: '' });
        changed = true;
      }
      const deepest = isCounter(track) ? COUNTER_LANES - 1 : track.maxDepth; // a chart needs height
      if (deepest > (this.depths.get(track.key) ?? -1)) {
        this.depths.set(track.key, deepest);
        changed = true;
      }
    }
    if (changed) this.relayout(false);
  }

  private relayout(request = true): void {
    const threads = [...this.threads.values()].sort((a, b) => a.pid - b.pid || a.tid - b.tid);
    this.layout = buildLayout([...this.processes.values()], threads, this.depths, this.collapsed as CollapseState);
    this.scrollTop = Math.min(this.scrollTop, maxScroll(this.layout, this.heightPx));
    if (request && this.full) this.requestWindow();
    this.onRedraw();
    this.onChange();
  }
}
