import { describe, expect, it } from 'vitest';
import { buildLayout, GROUP_HEADER_PX, hitLayout, LANE_PX, laneCentre, rowFilter, scrollToReveal, TRACK_GAP_PX, visibleSlice } from './layout';

const processes = [
  { pid: 1701, name: 'vm /host:CPU', sort: 1701 },
  { pid: 1002, name: 'vm /device:GPU:0', sort: 1002 },
];
const threads = [
  { pid: 1002, tid: 1, name: 'Stream #1' },
  { pid: 1701, tid: 10, name: 'main' },
  { pid: 1701, tid: 11, name: 'worker' },
  { pid: 9, tid: 3, name: '' },
];
const depths = new Map([['1701:10', 2]]);

describe('buildLayout', () => {
  const layout = buildLayout(processes, threads, depths);
  it('orders processes by sort index and names unknown ones', () => {
    expect(layout.groups.map((g) => g.name)).toEqual(['Process 9', 'vm /device:GPU:0', 'vm /host:CPU']);
    expect(layout.byKey.get('9:3')!.name).toBe('Thread 3');
  });
  it('gives each track one lane per depth and stacks them', () => {
    const main = layout.byKey.get('1701:10')!;
    expect(main.lanes).toBe(3);
    expect(main.height).toBe(3 * LANE_PX);
    const worker = layout.byKey.get('1701:11')!;
    expect(worker.y).toBe(main.y + main.height + TRACK_GAP_PX);
    expect(layout.totalHeight).toBe(worker.y + worker.height + TRACK_GAP_PX);
  });
  it('hides the tracks of a collapsed process and the lanes of a collapsed thread', () => {
    const collapsed = buildLayout(processes, threads, depths, { pids: new Set([1002]), tracks: new Set(['1701:10']) });
    expect(collapsed.byKey.has('1002:1')).toBe(false);
    expect(collapsed.groups.find((g) => g.pid === 1002)!.height).toBe(GROUP_HEADER_PX);
    expect(collapsed.byKey.get('1701:10')!.lanes).toBe(1);
  });
});

describe('virtualisation and hit testing', () => {
  const manyThreads = Array.from({ length: 1000 }, (_, i) => ({ pid: 1, tid: i, name: `t${i}` }));
  const layout = buildLayout([{ pid: 1, name: 'p' }], manyThreads, new Map());
  it('returns only the tracks in the viewport', () => {
    const slice = visibleSlice(layout, 5000, 400);
    expect(slice.tracks.length).toBeLessThanOrEqual(Math.ceil(400 / (LANE_PX + TRACK_GAP_PX)) + 1);
    expect(slice.tracks[0].y + slice.tracks[0].height).toBeGreaterThan(5000);
    expect(slice.tracks[slice.tracks.length - 1].y).toBeLessThan(5400);
    expect(slice.groups).toHaveLength(1);
  });
  it('finds the group header, the track and the lane under a y', () => {
    expect(hitLayout(layout, 3)).toMatchObject({ kind: 'group' });
    const track = layout.tracks[7];
    const hit = hitLayout(layout, track.y + 5);
    expect(hit.kind === 'track' && hit.track.key).toBe('1:7');
    expect(hitLayout(layout, track.y + track.height + 1)).toEqual({ kind: 'none' });
    expect(hitLayout(layout, 1e9)).toEqual({ kind: 'none' });
  });
  it('centres lanes and scrolls to reveal a track', () => {
    const track = layout.tracks[500];
    expect(laneCentre(track, 0)).toBe(track.y + LANE_PX / 2);
    expect(scrollToReveal(track, 0, 0, 600)).toBeGreaterThan(0);
    expect(scrollToReveal(track, 0, track.y - 10, 600)).toBe(track.y - 10);
  });
});

describe('rowFilter', () => {
  it('asks for everything when nothing is collapsed, else for the expanded rows', () => {
    const layout = buildLayout(processes, threads, depths);
    expect(rowFilter(layout, { pids: new Set(), tracks: new Set() })).toEqual({});
    const collapsed = { pids: new Set([1002]), tracks: new Set(['1701:11']) };
    const filtered = rowFilter(buildLayout(processes, threads, depths, collapsed), collapsed);
    expect(filtered.pids).toEqual([9, 1701]);
    expect(filtered.tids).toEqual([3, 10]);
  });
});
