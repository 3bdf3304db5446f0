/**
 * Vertical layout of the timeline: one group per process (a header band, collapsible) holding
 * one track per thread (one lane per nesting depth, collapsible to its name). Positions are in
 * CSS pixels from the top of the scrolled content; `visibleSlice` finds the groups and tracks a
 * viewport shows by binary search, so drawing cost follows the screen, not the row count.
 *
 *   const layout = buildLayout(processes, threads, depths, collapsed);
 *   for (const t of visibleSlice(layout, scrollTop, height).tracks) drawTrack(t);
 */
import { trackKey, type ProcessInfo, type ThreadInfo } from './contract';

export const GROUP_HEADER_PX = 22;
export const LANE_PX = 18;
export const TRACK_GAP_PX = 3;

export interface LayoutTrack {
  key: string;
  pid: number;
  tid: number;
  name: string;
  /** Top of the first lane. */
  y: number;
  height: number;
  lanes: number;
  collapsed: boolean;
}

export interface LayoutGroup {
  pid: number;
  name: string;
  /** Top of the header band. */
  y: number;
  /** Header plus tracks. */
  height: number;
  collapsed: boolean;
  tracks: LayoutTrack[];
}

export interface Layout {
  groups: LayoutGroup[];
  /** Every track of expanded groups, top to bottom. */
  tracks: LayoutTrack[];
  byKey: Map<string, LayoutTrack>;
  totalHeight: number;
}

export interface CollapseState {
  pids: ReadonlySet<number>;
  tracks: ReadonlySet<string>;
}

export const NOTHING_COLLAPSED: CollapseState = { pids: new Set(), tracks: new Set() };

function processOrder(a: ProcessInfo, b: ProcessInfo): number {
  return (a.sort ?? a.pid) - (b.sort ?? b.pid) || a.pid - b.pid;
}

/**
 * Groups and tracks for every known process and thread. `maxDepth` gives the deepest level
 * seen per track (one lane more than that); threads without metadata still get a track.
 */
export function buildLayout(
  processes: readonly ProcessInfo[],
  threads: readonly ThreadInfo[],
  maxDepth: ReadonlyMap<string, number>,
  collapsed: CollapseState = NOTHING_COLLAPSED,
): Layout {
  const byPid = new Map<number, ProcessInfo>();
  for (const p of processes) byPid.set(p.pid, p);
  const threadsByPid = new Map<number, ThreadInfo[]>();
  for (const t of threads) {
    if (!byPid.has(t.pid)) byPid.set(t.pid, { pid: t.pid, name: `Process ${t.pid}` });
    const list = threadsByPid.get(t.pid) ?? [];
    list.push(t);
    threadsByPid.set(t.pid, list);
  }
  const groups: LayoutGroup[] = [];
  const allTracks: LayoutTrack[] = [];
  const byKey = new Map<string, LayoutTrack>();
  let y = 0;
  for (const process of [...byPid.values()].sort(processOrder)) {
    const groupCollapsed = collapsed.pids.has(process.pid);
    const group: LayoutGroup = { pid: process.pid, name: process.name || `Process ${process.pid}`, y, height: 0, collapsed: groupCollapsed, tracks: [] };
    y += GROUP_HEADER_PX;
    if (!groupCollapsed) {
      for (const thread of threadsByPid.get(process.pid) ?? []) {
        const key = trackKey(thread.pid, thread.tid);
        const trackCollapsed = collapsed.tracks.has(key);
        const lanes = trackCollapsed ? 1 : (maxDepth.get(key) ?? 0) + 1;
        const track: LayoutTrack = {
          key,
          pid: thread.pid,
          tid: thread.tid,
          name: thread.name || `Thread ${thread.tid}`,
          y,
          height: lanes * LANE_PX,
          lanes,
          collapsed: trackCollapsed,
        };
        y += track.height + TRACK_GAP_PX;
        group.tracks.push(track);
        allTracks.push(track);
        byKey.set(key, track);
      }
    }
    group.height = y - group.y;
    groups.push(group);
  }
  return { groups, tracks: allTracks, byKey, totalHeight: y };
}

/** Index of the first item whose bottom (`y + height`) is below `top`. */
function firstBelow<T extends { y: number; height: number }>(items: readonly T[], top: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].y + items[mid].height <= top) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function slice<T extends { y: number; height: number }>(items: readonly T[], top: number, bottom: number): T[] {
  const out: T[] = [];
  for (let i = firstBelow(items, top); i < items.length && items[i].y < bottom; i++) out.push(items[i]);
  return out;
}

/** Groups and tracks intersecting [scrollTop, scrollTop + height). */
export function visibleSlice(layout: Layout, scrollTop: number, height: number): { groups: LayoutGroup[]; tracks: LayoutTrack[] } {
  const bottom = scrollTop + height;
  return { groups: slice(layout.groups, scrollTop, bottom), tracks: slice(layout.tracks, scrollTop, bottom) };
}

/** Largest useful scroll offset. */
export function maxScroll(layout: Layout, height: number): number {
  return Math.max(0, layout.totalHeight - height);
}

export type LayoutHit =
  | { kind: 'group'; group: LayoutGroup }
  | { kind: 'track'; track: LayoutTrack; depth: number }
  | { kind: 'none' };

/** What is at content y (scrollTop already added). */
export function hitLayout(layout: Layout, y: number): LayoutHit {
  const g = firstBelow(layout.groups, y);
  const group = layout.groups[g];
  if (!group || y < group.y) return { kind: 'none' };
  if (y < group.y + GROUP_HEADER_PX) return { kind: 'group', group };
  const t = firstBelow(group.tracks, y);
  const track = group.tracks[t];
  if (!track || y < track.y) return { kind: 'none' };
  return { kind: 'track', track, depth: Math.min(track.lanes - 1, Math.floor((y - track.y) / LANE_PX)) };
}

/** Centre y of `depth` in a track (clamped to its lanes). */
export function laneCentre(track: LayoutTrack, depth: number): number {
  return track.y + (Math.min(Math.max(depth, 0), track.lanes - 1) + 0.5) * LANE_PX;
}

/** Scroll offset that brings `track` (lane `depth`) into view, or `scrollTop` when already visible. */
export function scrollToReveal(track: LayoutTrack, depth: number, scrollTop: number, height: number): number {
  const top = track.y + Math.min(depth, track.lanes - 1) * LANE_PX;
  const bottom = top + LANE_PX;
  if (top >= scrollTop && bottom <= scrollTop + height) return scrollTop;
  return Math.max(0, top - height / 3);
}

/**
 * The `pids`/`tids` row filter for the expanded parts of the layout, or `{}` when every
 * row is wanted. tids are global, so a tid collapsed in one process but expanded in another stays.
 */
export function rowFilter(layout: Layout, collapsed: CollapseState): { pids?: number[]; tids?: number[] } {
  if (collapsed.pids.size === 0 && collapsed.tracks.size === 0) return {};
  const pids = layout.groups.filter((g) => !g.collapsed).map((g) => g.pid);
  if (collapsed.tracks.size === 0) return { pids };
  const tids = [...new Set(layout.tracks.filter((t) => !t.collapsed).map((t) => t.tid))];
  return { pids, tids };
}
