import { describe, expect, it } from 'vitest';
import { firstMatch, nextMatch, searchState } from './search-state';
import type { SearchResult } from './source';

const result: SearchResult = {
  query: 'conv',
  matches: [10, 20, 30].map((startMs, event) => ({ event, pid: 1, tid: 2, name: 'conv', startMs, endMs: startMs + 1 })),
  total: 3,
  truncated: false,
};

describe('search state', () => {
  it('keeps the match keys and sorted start times', () => {
    const state = searchState(result);
    expect(state.index).toBe(-1);
    expect([...state.keys]).toEqual([0, 1, 2]);
    expect([...state.times]).toEqual([10, 20, 30]);
  });

  it('starts at the first match in view, or the one before it going back', () => {
    const state = searchState(result);
    expect(firstMatch(state, 15, 1)).toBe(1);
    expect(firstMatch(state, 15, -1)).toBe(0);
    expect(firstMatch(state, 35, 1)).toBe(0); // none after: the first
    expect(firstMatch(state, 5, -1)).toBe(2); // none before: the last
  });

  it('steps forward and back with wrap-around', () => {
    const state = { ...searchState(result), index: 2 };
    expect(nextMatch(state, 1)).toBe(0);
    expect(nextMatch({ ...state, index: 0 }, -1)).toBe(2);
    expect(nextMatch({ ...state, index: -1 }, 1)).toBe(0);
    expect(nextMatch({ ...state, index: -1 }, -1)).toBe(2);
  });
});
