import { describe, expect, it } from 'vitest';
import { decodeSearch, decodeWindow, filterKey, isWindowAnswer, trackKey, type WindowAnswer } from './contract';
import { stubSearch, stubWindow } from './stub-answers';

describe('decodeWindow', () => {
  const request = { startMs: 0, endMs: 0.3, resolution: 1000 };
  const win = decodeWindow(stubWindow(request), request);

  it('keeps the window, the full span and the pixel size', () => {
    expect(win.startMs).toBe(0);
    expect(win.endMs).toBeCloseTo(0.3);
    expect(win.fullEndMs).toBeCloseTo(0.3);
    expect(win.pixelMs).toBeCloseTo(0.0003);
  });
  it('turns ns offsets from origin_ns into absolute ms', () => {
    const answer: WindowAnswer = { ...stubWindow(request), origin_ns: 5_000_000 };
    const shifted = decodeWindow(answer, request);
    expect(shifted.tracks.get(trackKey(1701, 10))!.beginMs[0]).toBeCloseTo(5);
  });
  it('groups items by depth, sorted by begin', () => {
    const main = win.tracks.get(trackKey(1701, 10))!;
    expect(main.maxDepth).toBe(1);
    expect([...main.depthStart]).toEqual([0, 2, 4]);
    expect(main.beginMs[2]).toBeLessThan(main.beginMs[3]);
  });
  it('sorts rows the backend left unordered', () => {
    const answer = stubWindow(request);
    const row = answer.rows.find((r) => r.tid === 10)!;
    for (const column of ['ts', 'dur', 'name', 'depth', 'merged', 'event'] as const) row[column].reverse();
    const main = decodeWindow(answer, request).tracks.get(trackKey(1701, 10))!;
    expect([...main.depth]).toEqual([0, 0, 1, 1]);
    expect(main.beginMs[0]).toBe(0);
    expect(main.event[0]).toBe(0);
  });
  it('merges sub-pixel neighbours into one box (stub of the backend)', () => {
    const worker = win.tracks.get(trackKey(1701, 11))!;
    expect(worker.merged.length).toBe(1);
    expect(worker.merged[0]).toBe(10);
  });
  it('maps flow rows to track keys and categories to strings', () => {
    expect(win.flows).toHaveLength(1);
    expect(win.flows[0]).toMatchObject({ fromTrack: '1002:1', toTrack: '1701:10', fromEvent: 14, toEvent: 1, flow: 3, cat: 'flow' });
    // An early draft sent categories as indices into strings.
    const answer = stubWindow(request);
    answer.strings.push('threadpool');
    answer.flows!.cat = [answer.strings.length - 1];
    expect(decodeWindow(answer, request).flows[0].cat).toBe('threadpool');
    expect(win.flows[0].fromMs).toBeCloseTo(0.02);
  });
  it('accepts a window answer and rejects other shapes', () => {
    expect(isWindowAnswer(stubWindow())).toBe(true);
    expect(isWindowAnswer({ traceEvents: [] })).toBe(false);
    expect(isWindowAnswer(null)).toBe(false);
  });
  it('tolerates columns of different lengths', () => {
    const answer = stubWindow(request);
    answer.rows[0].dur.pop();
    expect(() => decodeWindow(answer, request)).not.toThrow();
  });
});

describe('filterKey', () => {
  it('is empty without a filter and independent of order', () => {
    expect(filterKey({})).toBe('');
    expect(filterKey({ pids: [2, 1] })).toBe(filterKey({ pids: [1, 2] }));
    expect(filterKey({ pids: [1] })).not.toBe(filterKey({ pids: [1], tids: [3] }));
  });
});

describe('decodeSearch', () => {
  it('gives ms times sorted by start', () => {
    const matches = decodeSearch(stubSearch('train'));
    expect(matches.map((m) => m.name)).toEqual(['train 0', 'train 1']);
    expect(matches[1].startMs).toBeCloseTo(0.2);
    expect(matches[1].endMs).toBeCloseTo(0.3);
  });
});
