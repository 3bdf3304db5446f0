/**
 * Statistics of a time range selection, from the window data already loaded: how many events
 * overlap the range and their total duration, overall and per name (top N by total time).
 * A merged box counts its member count and its span; its span includes the gaps between its
 * members, so such totals are marked approximate.
 */
import type { TraceWindow } from './contract';
import { laneRange } from './hit-test';
import type { TimeSpan } from './viewport';

export interface NameStats {
  name: string;
  count: number;
  totalMs: number;
}

export interface RangeStats {
  startMs: number;
  endMs: number;
  count: number;
  totalMs: number;
  /** Some events were counted through merged boxes. */
  approximate: boolean;
  /** The top names by total time. */
  byName: NameStats[];
  /** Distinct names overall. */
  names: number;
}

/** Stats of the items overlapping `range` in the tracks `trackKeys` (all when null). */
export function rangeStats(win: TraceWindow, range: TimeSpan, trackKeys: ReadonlySet<string> | null, top = 10): RangeStats {
  const byName = new Map<number, NameStats>();
  let count = 0;
  let totalMs = 0;
  let approximate = false;
  for (const track of win.tracks.values()) {
    if (trackKeys && !trackKeys.has(track.key)) continue;
    for (let depth = 0; depth <= track.maxDepth; depth++) {
      const [from, to] = laneRange(track, depth, range.startMs, range.endMs);
      for (let i = from; i < to; i++) {
        const n = track.merged[i];
        const duration = track.endMs[i] - track.beginMs[i];
        if (n > 1) approximate = true;
        count += n;
        totalMs += duration;
        const key = track.name[i];
        const entry = byName.get(key) ?? { name: win.strings[key] ?? '', count: 0, totalMs: 0 };
        entry.count += n;
        entry.totalMs += duration;
        byName.set(key, entry);
      }
    }
  }
  const sorted = [...byName.values()].sort((a, b) => b.totalMs - a.totalMs || b.count - a.count || a.name.localeCompare(b.name));
  return { startMs: range.startMs, endMs: range.endMs, count, totalMs, approximate, byName: sorted.slice(0, top), names: sorted.length };
}
