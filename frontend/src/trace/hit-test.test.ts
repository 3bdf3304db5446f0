import { describe, expect, it } from 'vitest';
import { decodeWindow, trackKey } from './contract';
import { findEvent, itemAt, laneRange } from './hit-test';
import { stubWindow } from './stub-answers';

const request = { startMs: 0, endMs: 0.3, resolution: 1000 };
const win = decodeWindow(stubWindow(request), request);
const main = win.tracks.get(trackKey(1701, 10))!;

describe('laneRange', () => {
  it('finds the items of a depth overlapping a span (closed intervals)', () => {
    expect(laneRange(main, 0, 0.05, 0.15)).toEqual([0, 1]);
    expect(laneRange(main, 0, 0.1, 0.2)).toEqual([0, 2]); // touches both ends
    expect(laneRange(main, 1, 0.045, 0.049)).toEqual([3, 3]); // in the gap
    expect(laneRange(main, 5, 0, 1)).toEqual([0, 0]);
  });
});

describe('itemAt', () => {
  it('hits the item under the time and returns its columns', () => {
    const i = itemAt(main, 1, 0.02, 0);
    expect(win.strings[main.name[i]]).toBe('MatMul');
    expect(main.event[i]).toBe(1);
  });
  it('misses in gaps unless within the tolerance, then takes the closest', () => {
    expect(itemAt(main, 1, 0.045, 0)).toBe(-1);
    expect(win.strings[main.name[itemAt(main, 1, 0.0455, 0.006)]]).toBe('Relu');
    expect(win.strings[main.name[itemAt(main, 1, 0.0415, 0.006)]]).toBe('MatMul');
  });
  it('hits a merged box', () => {
    const worker = win.tracks.get(trackKey(1701, 11))!;
    const i = itemAt(worker, 0, 0.0015, 0);
    expect(worker.merged[i]).toBe(10);
  });
});

describe('findEvent', () => {
  it('finds an event key in the window', () => {
    const ref = findEvent(win, 14)!;
    expect(ref.track.key).toBe('1002:1');
    expect(findEvent(win, 999)).toBeNull();
  });
});
