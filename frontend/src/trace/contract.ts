/**
 * The `trace_viewer@` window / search / details answers (docs/trace_viewer.md) and their decoding
 * into what the timeline draws: per row, typed columns of absolute times in ms on the trace clock,
 * items of one depth contiguous and sorted by begin (so a lane is binary-searchable).
 *
 *   const win = decodeWindow(await api.getJson('data', windowQuery(...)), request);
 *   const track = win.tracks.get(trackKey(1701, 42));   // begin/end/name/depth/merged/event
 */

export interface ProcessInfo {
  pid: number;
  name: string;
  sort?: number;
}

export interface ThreadInfo {
  pid: number;
  tid: number;
  name: string;
}

export interface WindowRowAnswer {
  pid: number;
  tid: number;
  ts: number[];
  dur: number[];
  name: number[];
  depth: number[];
  merged: number[];
  event: number[];
  /** Counter rows only: each item's sample value (a merged box's peak). */
  value?: number[];
}

export interface FlowsAnswer {
  from_row: number[];
  from_ts: number[];
  to_row: number[];
  to_ts: number[];
  from_event: number[];
  to_event: number[];
  /** Flow number (same number = same flow). */
  flow?: number[];
  /** Category: a string (an index into `strings` in early drafts of the contract). */
  cat: (string | number)[];
}

export interface WindowAnswer {
  version: number;
  window: [number, number];
  origin_ns: number;
  fullTimespan: [number, number];
  resolution: number;
  strings: string[];
  processes: ProcessInfo[];
  threads: ThreadInfo[];
  rows: WindowRowAnswer[];
  flows?: FlowsAnswer;
  events?: number;
  visible?: number;
  returned?: number;
  merged?: number;
  truncated?: boolean;
  flows_truncated?: boolean;
  hint?: string;
}

export interface SearchAnswer {
  version: number;
  query: string;
  total: number;
  truncated: boolean;
  strings: string[];
  /** ts, dur in µs. */
  matches: { pid: number[]; tid: number[]; ts: number[]; dur: number[]; name: number[]; event: number[] };
}

export interface FlowEventRef {
  event: number;
  pid: number;
  tid: number;
  /** µs */
  ts: number;
  /** µs */
  dur?: number;
  name: string;
}

export interface DetailsAnswer {
  version: number;
  event: number;
  pid: number;
  tid: number;
  depth: number;
  name: string;
  /** µs */
  ts: number;
  /** µs */
  dur: number;
  args: Record<string, unknown>;
  /** `num_events` counts the flow's events; at most 100 are listed. */
  flows: { flow: number; direction: string; cat: string; num_events?: number; events: FlowEventRef[] }[];
}

/** What the timeline asked for; `pids`/`tids` absent = every row. */
export interface WindowRequest {
  startMs: number;
  endMs: number;
  resolution: number;
  pids?: readonly number[];
  tids?: readonly number[];
  maxEvents?: number;
}

/** One row (pid, tid) of a window: columns of equal length, ordered by (depth, begin). */
export interface TrackData {
  key: string;
  pid: number;
  tid: number;
  beginMs: Float64Array;
  endMs: Float64Array;
  name: Int32Array;
  depth: Uint16Array;
  merged: Uint32Array;
  event: Float64Array;
  /** A counter series' sample values (drawn as a chart); null for a row of slices. */
  value: Float64Array | null;
  /** Items of depth d are [depthStart[d], depthStart[d + 1]). Length maxDepth + 2. */
  depthStart: Int32Array;
  maxDepth: number;
}

export interface FlowArrow {
  fromTrack: string;
  fromMs: number;
  toTrack: string;
  toMs: number;
  fromEvent: number;
  toEvent: number;
  flow: number;
  cat: string;
}

export interface TraceWindow {
  request: WindowRequest;
  /** The row filter of the request ('' = all rows); see `filterKey`. */
  filter: string;
  startMs: number;
  endMs: number;
  resolution: number;
  /** ms per pixel of this answer; 0 when it was asked without merging. */
  pixelMs: number;
  fullStartMs: number;
  fullEndMs: number;
  strings: string[];
  processes: ProcessInfo[];
  threads: ThreadInfo[];
  tracks: Map<string, TrackData>;
  flows: FlowArrow[];
  events: number;
  visible: number;
  returned: number;
  merged: number;
  truncated: boolean;
  flowsTruncated: boolean;
  hint: string;
}

export function trackKey(pid: number, tid: number): string {
  return `${pid}:${tid}`;
}

/** Identifies the row selection of a request, so windows of different selections are not mixed. */
export function filterKey(request: Pick<WindowRequest, 'pids' | 'tids'>): string {
  const pids = request.pids ? [...request.pids].sort((a, b) => a - b).join(',') : '';
  const tids = request.tids ? [...request.tids].sort((a, b) => a - b).join(',') : '';
  return pids || tids ? `p${pids}|t${tids}` : '';
}

export function isWindowAnswer(value: unknown): value is WindowAnswer {
  if (!value || typeof value !== 'object') return false;
  const v = value as Partial<WindowAnswer>;
  return Array.isArray(v.window) && Array.isArray(v.fullTimespan) && Array.isArray(v.rows) && Array.isArray(v.strings);
}

const num = (value: unknown, fallback = 0): number => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

/** Absolute ms of `ts` ns from `originNs` (exact in doubles for traces shorter than ~100 days). */
export function nsToMs(originNs: number, ts: number): number {
  return (originNs + ts) / 1e6;
}

export function decodeWindow(answer: WindowAnswer, request: WindowRequest): TraceWindow {
  const origin = num(answer.origin_ns);
  const strings = answer.strings.map((s) => String(s));
  const tracks = new Map<string, TrackData>();
  const rowKeys: string[] = [];
  for (const row of answer.rows) {
    const track = decodeRow(row, origin);
    tracks.set(track.key, track);
    rowKeys.push(track.key);
  }
  const [startMs, endMs] = [num(answer.window[0]), num(answer.window[1])];
  const resolution = num(answer.resolution, request.resolution);
  return {
    request,
    filter: filterKey(request),
    startMs,
    endMs,
    resolution,
    pixelMs: resolution > 0 ? (endMs - startMs) / resolution : 0,
    fullStartMs: num(answer.fullTimespan[0]),
    fullEndMs: num(answer.fullTimespan[1]),
    strings,
    processes: (answer.processes ?? []).map((p) => ({ pid: num(p.pid), name: String(p.name ?? ''), sort: p.sort })),
    threads: (answer.threads ?? []).map((t) => ({ pid: num(t.pid), tid: num(t.tid), name: String(t.name ?? '') })),
    tracks,
    flows: decodeFlows(answer.flows, origin, rowKeys, strings),
    events: num(answer.events),
    visible: num(answer.visible),
    returned: num(answer.returned),
    merged: num(answer.merged),
    truncated: !!answer.truncated,
    flowsTruncated: !!answer.flows_truncated,
    hint: typeof answer.hint === 'string' ? answer.hint : '',
  };
}

function decodeRow(row: WindowRowAnswer, origin: number): TrackData {
  const n = Math.min(row.ts?.length ?? 0, row.dur?.length ?? 0);
  const beginMs = new Float64Array(n);
  const endMs = new Float64Array(n);
  const name = new Int32Array(n);
  const depth = new Uint16Array(n);
  const merged = new Uint32Array(n);
  const event = new Float64Array(n);
  const value = Array.isArray(row.value) ? new Float64Array(n) : null;
  let maxDepth = 0;
  for (let i = 0; i < n; i++) {
    beginMs[i] = nsToMs(origin, row.ts[i]);
    endMs[i] = nsToMs(origin, row.ts[i] + Math.max(0, row.dur[i]));
    name[i] = row.name?.[i] ?? 0;
    depth[i] = row.depth?.[i] ?? 0;
    merged[i] = row.merged?.[i] ?? 1;
    event[i] = row.event?.[i] ?? -1;
    if (value) value[i] = num(row.value?.[i], NaN);
    if (depth[i] > maxDepth) maxDepth = depth[i];
  }
  const order = sortedByDepthAndBegin(depth, beginMs);
  const track: TrackData = {
    key: trackKey(row.pid, row.tid),
    pid: row.pid,
    tid: row.tid,
    beginMs,
    endMs,
    name,
    depth,
    merged,
    event,
    value,
    depthStart: new Int32Array(maxDepth + 2),
    maxDepth,
  };
  if (order) permute(track, order);
  fillDepthStart(track);
  return track;
}

/** The backend already orders items by (depth, begin); only reorder when it did not. */
function sortedByDepthAndBegin(depth: Uint16Array, begin: Float64Array): Int32Array | null {
  for (let i = 1; i < depth.length; i++) {
    if (depth[i] < depth[i - 1] || (depth[i] === depth[i - 1] && begin[i] < begin[i - 1])) {
      const order = Int32Array.from(depth, (_, k) => k);
      order.sort((a, b) => depth[a] - depth[b] || begin[a] - begin[b]);
      return order;
    }
  }
  return null;
}

function permute(track: TrackData, order: Int32Array): void {
  for (const column of ['beginMs', 'endMs', 'name', 'depth', 'merged', 'event', 'value'] as const) {
    const source = track[column];
    if (!source) continue;
    const copy = source.slice();
    for (let i = 0; i < order.length; i++) copy[i] = source[order[i]];
    (track[column] as typeof source) = copy;
  }
}

function fillDepthStart(track: TrackData): void {
  const { depth, depthStart, maxDepth } = track;
  let i = 0;
  for (let d = 0; d <= maxDepth + 1; d++) {
    while (i < depth.length && depth[i] < d) i++;
    depthStart[d] = i;
  }
}

function decodeFlows(flows: FlowsAnswer | undefined, origin: number, rowKeys: string[], strings: string[]): FlowArrow[] {
  if (!flows || !Array.isArray(flows.from_row)) return [];
  const out: FlowArrow[] = [];
  for (let i = 0; i < flows.from_row.length; i++) {
    const fromTrack = rowKeys[flows.from_row[i]];
    const toTrack = rowKeys[flows.to_row?.[i]];
    if (fromTrack === undefined || toTrack === undefined) continue;
    out.push({
      fromTrack,
      fromMs: nsToMs(origin, flows.from_ts[i]),
      toTrack,
      toMs: nsToMs(origin, flows.to_ts[i]),
      fromEvent: flows.from_event?.[i] ?? -1,
      toEvent: flows.to_event?.[i] ?? -1,
      flow: flows.flow?.[i] ?? -1,
      cat: flowCategory(flows.cat?.[i], strings),
    });
  }
  return out;
}

function flowCategory(cat: string | number | undefined, strings: string[]): string {
  if (typeof cat === 'string') return cat;
  return typeof cat === 'number' ? (strings[cat] ?? '') : '';
}

/** One search hit with times in ms. */
export interface SearchMatch {
  pid: number;
  tid: number;
  startMs: number;
  endMs: number;
  name: string;
  event: number;
}

export function decodeSearch(answer: SearchAnswer): SearchMatch[] {
  const m = answer.matches;
  if (!m || !Array.isArray(m.event)) return [];
  const out: SearchMatch[] = [];
  for (let i = 0; i < m.event.length; i++) {
    const startMs = num(m.ts[i]) / 1000;
    out.push({
      pid: num(m.pid[i]),
      tid: num(m.tid[i]),
      startMs,
      endMs: startMs + Math.max(0, num(m.dur[i])) / 1000,
      name: answer.strings[m.name[i]] ?? '',
      event: m.event[i],
    });
  }
  return out.sort((a, b) => a.startMs - b.startMs || a.event - b.event);
}
