/**
 * Finding items in a track's columns. Items of one depth never overlap and are sorted by
 * begin, so their ends are sorted too: one binary search finds the first item ending at or
 * after a time, and a short scan the rest. Everything here is O(log n) per lane.
 */
import type { TraceWindow, TrackData } from './contract';

/** First index in [lo, hi) whose end ≥ `timeMs` (hi when none). */
export function firstEndingAfter(endMs: Float64Array, lo: number, hi: number, timeMs: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (endMs[mid] < timeMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index range [from, to) of the items of `depth` overlapping [t0, t1]. */
export function laneRange(track: TrackData, depth: number, t0: number, t1: number): [number, number] {
  if (depth > track.maxDepth) return [0, 0];
  const lo = track.depthStart[depth];
  const hi = track.depthStart[depth + 1];
  const from = firstEndingAfter(track.endMs, lo, hi, t0);
  let to = from;
  while (to < hi && track.beginMs[to] <= t1) to++;
  return [from, to];
}

/**
 * The item of `depth` under `timeMs`, allowing `toleranceMs` on each side (items narrower
 * than a pixel are drawn a pixel wide); the closest one wins. -1 when none.
 */
export function itemAt(track: TrackData, depth: number, timeMs: number, toleranceMs: number): number {
  const [from, to] = laneRange(track, depth, timeMs - toleranceMs, timeMs + toleranceMs);
  let best = -1;
  let bestDistance = Infinity;
  for (let i = from; i < to; i++) {
    const begin = track.beginMs[i];
    const end = track.endMs[i];
    const distance = timeMs < begin ? begin - timeMs : timeMs > end ? timeMs - end : 0;
    if (distance < bestDistance) {
      best = i;
      bestDistance = distance;
    }
  }
  return best;
}

export interface ItemRef {
  track: TrackData;
  index: number;
}

/** Where an event key sits in a window (an item or the first member of a box). */
export function findEvent(win: TraceWindow, event: number): ItemRef | null {
  for (const track of win.tracks.values()) {
    const { event: keys } = track;
    for (let i = 0; i < keys.length; i++) if (keys[i] === event) return { track, index: i };
  }
  return null;
}
