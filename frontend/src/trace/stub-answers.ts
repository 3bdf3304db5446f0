/**
 * TEST ONLY: small answers in the `trace_viewer@` format (docs/trace_viewer.md) for the unit
 * tests, and a stand-in backend that answers window queries from a list of events the way the
 * contract describes (closed-interval overlap, sub-pixel merging per depth). Not imported by
 * the app.
 */
import type { SearchAnswer, WindowAnswer, WindowRequest } from './contract';

export interface StubEvent {
  pid: number;
  tid: number;
  /** ns */
  begin: number;
  /** ns */
  dur: number;
  name: string;
  depth: number;
}

export const STUB_EVENTS: StubEvent[] = [
  // 1701:10, depth 0 and 1
  { pid: 1701, tid: 10, begin: 0, dur: 100_000, name: 'train 0', depth: 0 },
  { pid: 1701, tid: 10, begin: 10_000, dur: 30_000, name: 'MatMul', depth: 1 },
  { pid: 1701, tid: 10, begin: 50_000, dur: 20_000, name: 'Relu', depth: 1 },
  { pid: 1701, tid: 10, begin: 200_000, dur: 100_000, name: 'train 1', depth: 0 },
  // 1701:11, many tiny events
  ...Array.from({ length: 10 }, (_, i) => ({ pid: 1701, tid: 11, begin: 1000 + i * 100, dur: 50, name: 'tiny', depth: 0 })),
  // 1002:1 (device)
  { pid: 1002, tid: 1, begin: 20_000, dur: 5_000, name: 'fusion.1', depth: 0 },
];

/** A window answer over STUB_EVENTS with the given request, merging as the backend does. */
export function stubWindow(request: Partial<WindowRequest> = {}, events: StubEvent[] = STUB_EVENTS): WindowAnswer {
  const fullStart = Math.min(...events.map((e) => e.begin));
  const fullEnd = Math.max(...events.map((e) => e.begin + e.dur));
  const startNs = Math.max(fullStart, (request.startMs ?? fullStart / 1e6) * 1e6);
  const endNs = Math.min(fullEnd, request.endMs ? request.endMs * 1e6 : fullEnd);
  const resolution = request.resolution ?? 2000;
  const pixel = resolution > 0 ? (endNs - startNs) / resolution : 0;
  const strings: string[] = [];
  const intern = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const rows: WindowAnswer['rows'] = [];
  const keys = [...new Set(events.map((e) => `${e.pid}:${e.tid}`))].sort();
  for (const key of keys) {
    const [pid, tid] = key.split(':').map(Number);
    if (request.pids && !request.pids.includes(pid)) continue;
    if (request.tids && !request.tids.includes(tid)) continue;
    const mine = events
      .map((e, index) => ({ ...e, index }))
      .filter((e) => e.pid === pid && e.tid === tid && e.begin <= endNs && e.begin + e.dur >= startNs)
      .sort((a, b) => a.depth - b.depth || a.begin - b.begin);
    if (!mine.length) continue;
    const row = { pid, tid, ts: [] as number[], dur: [] as number[], name: [] as number[], depth: [] as number[], merged: [] as number[], event: [] as number[] };
    let open: { begin: number; end: number; count: number; depth: number } | null = null;
    for (const e of mine) {
      const narrow = e.dur < pixel;
      const last = row.ts.length - 1;
      if (narrow && open && open.depth === e.depth && e.begin - open.end < pixel) {
        open.end = e.begin + e.dur;
        open.count++;
        row.dur[last] = open.end - open.begin;
        row.merged[last] = open.count;
        continue;
      }
      row.ts.push(e.begin - startNs);
      row.dur.push(Math.max(1, e.dur));
      row.name.push(intern(e.name));
      row.depth.push(e.depth);
      row.merged.push(1);
      row.event.push(e.index);
      open = narrow ? { begin: e.begin, end: e.begin + e.dur, count: 1, depth: e.depth } : null;
    }
    rows.push(row);
  }
  return {
    version: 1,
    window: [startNs / 1e6, endNs / 1e6],
    origin_ns: startNs,
    fullTimespan: [fullStart / 1e6, fullEnd / 1e6],
    resolution,
    strings,
    processes: [
      { pid: 1002, name: 'vm /device:GPU:0', sort: 1002 },
      { pid: 1701, name: 'vm /host:CPU', sort: 1701 },
    ],
    threads: [
      { pid: 1002, tid: 1, name: 'Stream #1' },
      { pid: 1701, tid: 10, name: 'main' },
      { pid: 1701, tid: 11, name: 'worker' },
    ],
    rows,
    flows: stubFlows(rows, startNs),
    events: events.length,
    visible: 0,
    returned: rows.reduce((n, r) => n + r.ts.length, 0),
    merged: 0,
    truncated: false,
    flows_truncated: false,
    hint: '',
  };
}

/** One arrow fusion.1 (1002:1) → MatMul (1701:10) when both rows are in the answer. */
function stubFlows(rows: WindowAnswer['rows'], startNs: number): WindowAnswer['flows'] {
  const from = rows.findIndex((r) => r.pid === 1002 && r.tid === 1);
  const to = rows.findIndex((r) => r.pid === 1701 && r.tid === 10);
  if (from < 0 || to < 0) return { from_row: [], from_ts: [], to_row: [], to_ts: [], from_event: [], to_event: [], cat: [] };
  return { from_row: [from], from_ts: [20_000 - startNs], to_row: [to], to_ts: [10_000 - startNs], from_event: [14], to_event: [1], flow: [3], cat: ['flow'] };
}

export function stubSearch(query: string, events: StubEvent[] = STUB_EVENTS): SearchAnswer {
  const hits = events.map((e, event) => ({ ...e, event })).filter((e) => e.name.toLowerCase().includes(query.toLowerCase()));
  const strings = [...new Set(hits.map((h) => h.name))];
  return {
    version: 1,
    query,
    total: hits.length,
    truncated: false,
    strings,
    matches: {
      pid: hits.map((h) => h.pid),
      tid: hits.map((h) => h.tid),
      ts: hits.map((h) => h.begin / 1000),
      dur: hits.map((h) => h.dur / 1000),
      name: hits.map((h) => strings.indexOf(h.name)),
      event: hits.map((h) => h.event),
    },
  };
}
