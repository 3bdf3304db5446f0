import { describe, expect, it } from 'vitest';
import { decodeWindow, type DetailsAnswer, type WindowRequest } from './contract';
import { STUB_EVENTS, stubSearch, stubWindow } from './stub-answers';
import { windowParams, type TraceSource } from './source';
import { TimelineModel } from './timeline-model';
import { GROUP_HEADER_PX, LANE_PX } from './layout';

function stubSource() {
  const requests: WindowRequest[] = [];
  const source: TraceSource = {
    window: async (request) => {
      requests.push(request);
      const bounded = Number.isFinite(request.startMs) ? request : { resolution: request.resolution, pids: request.pids, tids: request.tids };
      return decodeWindow(stubWindow(bounded), request);
    },
    search: async (query) => {
      const answer = stubSearch(query);
      const { decodeSearch } = await import('./contract');
      return { query, matches: decodeSearch(answer), total: answer.total, truncated: false };
    },
    details: async (event): Promise<DetailsAnswer> => {
      const e = STUB_EVENTS[event];
      if (!e) throw new Error('Unknown event.');
      return { version: 1, event, pid: e.pid, tid: e.tid, depth: e.depth, name: e.name, ts: e.begin / 1000, dur: e.dur / 1000, args: { k: 'v' }, flows: [] };
    },
  };
  return { source, requests };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

async function started(url = {}) {
  const { source, requests } = stubSource();
  const model = new TimelineModel(source, 0);
  model.setSize(1000, 500);
  await model.start(url);
  return { model, requests };
}

describe('windowParams', () => {
  it('writes the window, resolution and row filter; omits an unbounded window', () => {
    expect(windowParams({ startMs: 1.5, endMs: 2, resolution: 999.6, pids: [1, 2] })).toEqual({
      format: 'columnar', resolution: 1000, start_time_ms: '1.5', end_time_ms: '2', pids: '1,2', max_events: 100000,
    });
    expect(windowParams({ startMs: -Infinity, endMs: Infinity, resolution: 10 })).not.toHaveProperty('start_time_ms');
  });
});

describe('TimelineModel', () => {
  it('draws only the selected event\'s flows until all flows are switched on', async () => {
    const { model } = await started();
    let redraws = 0;
    model.onRedraw = () => redraws++;
    expect(model.allFlows).toBe(false);
    model.setAllFlows(true);
    expect(model.allFlows).toBe(true);
    expect(redraws).toBe(1);
  });

  it('starts from the whole trace and lays out the rows of the metadata', async () => {
    const { model } = await started();
    expect(model.phase).toBe('ready');
    expect(model.full!.endMs).toBeCloseTo(0.3);
    expect(model.span).toEqual(model.full);
    expect(model.layout.tracks.map((t) => t.key)).toEqual(['1002:1', '1701:10', '1701:11']);
    expect(model.layout.byKey.get('1701:10')!.lanes).toBe(2);
  });

  it('opens the window of a shared link, clamped to the trace', async () => {
    const { model } = await started({ startMs: 0.1, endMs: 5 });
    expect(model.span.startMs).toBeCloseTo(0.0);
    expect(model.span.endMs).toBeCloseTo(0.3);
    const { model: inner } = await started({ startMs: 0.1, endMs: 0.2 });
    expect(inner.span).toEqual({ startMs: 0.1, endMs: 0.2 });
  });

  it('asks for a narrower window after zooming in, with the screen width as resolution', async () => {
    const { model, requests } = await started();
    model.zoom(0.5, 0.5);
    await settle();
    const last = requests[requests.length - 1];
    expect(last.endMs - last.startMs).toBeCloseTo(0.15);
    expect(last.resolution).toBe(1000);
    expect(model.windows().primary!.startMs).toBeCloseTo(0.075);
  });

  it('asks only for expanded processes', async () => {
    const { model, requests } = await started();
    const sent = requests.length;
    model.toggleGroup(1002);
    await settle();
    // The whole-trace answer (every row) still serves the view: no request.
    expect(requests.length).toBe(sent);
    model.zoom(0.5, 0.5);
    await settle();
    expect(requests[requests.length - 1].pids).toEqual([1701]);
    expect(model.layout.byKey.has('1002:1')).toBe(false);
  });

  it('selects the event under a click and loads its details', async () => {
    const { model } = await started();
    const track = model.layout.byKey.get('1701:10')!;
    const x = (0.02 / 0.3) * 1000; // MatMul at 10–40 µs, depth 1
    model.click(x, track.y + LANE_PX * 1.5 - model.scrollTop);
    await settle();
    expect(model.selection?.name).toBe('MatMul');
    expect(model.selection?.details?.args).toEqual({ k: 'v' });
    model.click(x, track.y + LANE_PX * 3 + 200);
    expect(model.selection).toBeNull();
  });

  it('drops an unknown event of a shared link quietly, but reports one the user picked', async () => {
    const { model } = await started({ event: 999 });
    expect(model.selection).toBeNull();
    await model.selectEvent(999, { reveal: false });
    expect(model.selection?.error).toBeTruthy();
  });

  it('toggles a process from its header', async () => {
    const { model } = await started();
    model.click(10, GROUP_HEADER_PX / 2);
    expect(model.collapsed.pids.has(1002)).toBe(true);
  });

  it('searches, jumps to the first match after the view start, and steps', async () => {
    const { model } = await started();
    await model.searchOrStep('train', 1);
    await settle();
    expect(model.search!.matches).toHaveLength(2);
    expect(model.selection?.name).toBe('train 0');
    expect(model.span.startMs).toBeLessThan(0.05);
    await model.searchOrStep('train', 1);
    await settle();
    expect(model.search!.index).toBe(1);
    expect(model.selection?.name).toBe('train 1');
    expect(model.span.startMs).toBeLessThanOrEqual(0.2);
    expect(model.span.endMs).toBeGreaterThanOrEqual(0.3);
    model.step(1);
    expect(model.search!.index).toBe(0);
  });

  it('marks the selected event as a range and counts what it covers', async () => {
    const { model } = await started();
    await model.selectEvent(0, { reveal: true });
    model.markSelection();
    const stats = model.rangeStats()!;
    expect(stats.count).toBe(3);
    expect(stats.byName[0].name).toBe('train 0');
    model.fit();
    expect(model.span.endMs - model.span.startMs).toBeCloseTo(0.1 / 0.9);
  });
});
