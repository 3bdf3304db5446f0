/**
 * The trace search's matches as the timeline keeps them (event keys for highlighting, sorted
 * start times for the ruler's markers) and which match Enter / Shift+Enter goes to: the first
 * one at or after the visible span's start, then the next or previous one, wrapping around.
 */
import type { SearchResult } from './source';

export interface SearchState extends SearchResult {
  index: number;
  /** Event keys of the matches, for highlighting. */
  keys: Set<number>;
  /** Match start times, sorted (ruler markers). */
  times: Float64Array;
}

export function searchState(result: SearchResult): SearchState {
  return {
    ...result,
    index: -1,
    keys: new Set(result.matches.map((m) => m.event)),
    times: Float64Array.from(result.matches, (m) => m.startMs),
  };
}

/** The match a new search goes to: forward, the first at or after `startMs`; back, the one before. */
export function firstMatch(state: SearchState, startMs: number, direction: 1 | -1): number {
  const after = state.matches.findIndex((m) => m.startMs >= startMs);
  if (direction === 1) return Math.max(after, 0);
  return after > 0 ? after - 1 : state.matches.length - 1;
}

/** The match after (or before) the current one, wrapping; from no current match, the first (last). */
export function nextMatch(state: SearchState, direction: 1 | -1): number {
  const n = state.matches.length;
  const from = state.index < 0 ? (direction === 1 ? -1 : 0) : state.index;
  return (((from + direction) % n) + n) % n;
}
