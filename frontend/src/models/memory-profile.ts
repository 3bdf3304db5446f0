/**
 * memory_profile (proto-JSON `MemoryProfile`): per memory id (allocator) a summary, a timeline
 * (stack / heap / free memory stacked, fragmentation on a second axis; each point carries the
 * allocation event it follows) and the breakdown of the allocations live at the peak.
 * int64 fields arrive as strings in proto-JSON; they are read with `toNumber`.
 */
import type { TimelineChartModel } from './chart-models';
import { formatBytes, formatMiB, MIB } from '../format';
import type { DataTable } from '../table/datatable';
import type { Metric } from './overview';

interface AggregationStats {
  stackReservedBytes?: string | number;
  heapAllocatedBytes?: string | number;
  freeMemoryBytes?: string | number;
  fragmentation?: number;
  peakBytesInUse?: string | number;
}

interface ActivityMetadata {
  memoryActivity?: string;
  requestedBytes?: string | number;
  allocationBytes?: string | number;
  address?: string;
  tfOpName?: string;
  stepId?: string | number;
  regionType?: string;
  dataType?: string;
  tensorShape?: string;
}

interface Snapshot {
  timeOffsetPs?: string | number;
  aggregationStats?: AggregationStats;
  activityMetadata?: ActivityMetadata;
}

interface PerAllocator {
  memoryProfileSnapshots?: Snapshot[];
  sampledTimelineSnapshots?: Snapshot[];
  profileSummary?: {
    peakBytesUsageLifetime?: string | number;
    peakStats?: AggregationStats;
    peakStatsTimePs?: string | number;
    memoryCapacity?: string | number;
  };
  activeAllocations?: { snapshotIndex?: string | number; specialIndex?: string | number; numOccurrences?: string | number }[];
  specialAllocations?: ActivityMetadata[];
}

export interface MemoryProfilePayload {
  memoryProfilePerAllocator?: Record<string, PerAllocator>;
  memoryIds?: string[];
  numHosts?: number;
  /** Ours: allocation and deallocation counts over every event (the snapshots are a sample). */
  allocatorEventCounts?: Record<string, { allocations?: number; deallocations?: number }>;
}


export function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : 0;
}

export function isMemoryProfile(payload: unknown): payload is MemoryProfilePayload {
  return !!payload && typeof payload === 'object' && 'memoryProfilePerAllocator' in payload;
}

/** Memory ids in the payload's order (`memoryIds`), else the allocator keys sorted. */
export function memoryIds(payload: MemoryProfilePayload): string[] {
  const perAllocator = payload.memoryProfilePerAllocator ?? {};
  const listed = (payload.memoryIds ?? []).filter((id) => id in perAllocator);
  return listed.length ? listed : Object.keys(perAllocator).sort();
}

export interface TimelinePoint {
  timeMs: number;
  stackMiB: number;
  heapMiB: number;
  freeMiB: number;
  fragmentationPercent: number;
  event: ActivityMetadata;
}

export interface MemoryTimelineModel {
  points: TimelinePoint[];
  /** Free memory dwarfs usage (e.g. a 64 GiB host): start with its series hidden. */
  hideFree: boolean;
}

export interface MemoryModel {
  id: string;
  summary: Metric[];
  timeline: MemoryTimelineModel;
  breakdown: DataTable;
  peakMiB: number;
}

function mib(bytes: unknown): number {
  return toNumber(bytes) / MIB;
}


export function timelineModel(allocator: PerAllocator): MemoryTimelineModel {
  const sampled = allocator.sampledTimelineSnapshots ?? [];
  const snapshots = sampled.length ? sampled : allocator.memoryProfileSnapshots ?? [];
  const points = snapshots.map((s) => ({
    timeMs: toNumber(s.timeOffsetPs) / 1e9,
    stackMiB: mib(s.aggregationStats?.stackReservedBytes),
    heapMiB: mib(s.aggregationStats?.heapAllocatedBytes),
    freeMiB: mib(s.aggregationStats?.freeMemoryBytes),
    fragmentationPercent: 100 * toNumber(s.aggregationStats?.fragmentation),
    event: s.activityMetadata ?? {},
  }));
  points.sort((a, b) => a.timeMs - b.timeMs);
  const maxUsed = Math.max(0, ...points.map((p) => p.stackMiB + p.heapMiB));
  const maxFree = Math.max(0, ...points.map((p) => p.freeMiB));
  return { points, hideFree: maxUsed > 0 && maxFree > 10 * maxUsed };
}

/** The allocations live at the peak, largest first. */
export function peakBreakdown(allocator: PerAllocator): DataTable {
  const snapshots = allocator.memoryProfileSnapshots ?? [];
  const special = allocator.specialAllocations ?? [];
  const rows = (allocator.activeAllocations ?? [])
    .map((active) => {
      const snapshotIndex = toNumber(active.snapshotIndex ?? -1);
      const specialIndex = toNumber(active.specialIndex ?? -1);
      const event = snapshotIndex >= 0 ? snapshots[snapshotIndex]?.activityMetadata : special[specialIndex];
      return { event: event ?? {}, occurrences: toNumber(active.numOccurrences ?? 1) };
    })
    .sort((a, b) => toNumber(b.event.allocationBytes) - toNumber(a.event.allocationBytes));
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    cols: [
      { id: 'op_name', label: 'Op name', type: 'string' },
      { id: 'allocation_mib', label: 'Allocation size (MiB)', type: 'number' },
      { id: 'requested_mib', label: 'Requested size (MiB)', type: 'number' },
      { id: 'occurrences', label: 'Occurrences', type: 'number' },
      { id: 'region_type', label: 'Region type', type: 'string' },
      { id: 'data_type', label: 'Data type', type: 'string' },
      { id: 'shape', label: 'Shape', type: 'string' },
      { id: 'step_id', label: 'Step id', type: 'string' },
    ],
    rows: rows.map(({ event, occurrences }) => ({
      c: [
        { v: event.tfOpName ?? '' },
        { v: round(mib(event.allocationBytes)) },
        { v: round(mib(event.requestedBytes)) },
        { v: occurrences },
        { v: event.regionType ?? '' },
        { v: event.dataType ?? '' },
        { v: event.tensorShape ?? '' },
        { v: event.stepId === undefined ? '' : String(event.stepId) },
      ],
    })),
  };
}

export function memoryModel(payload: MemoryProfilePayload, id: string): MemoryModel | null {
  const allocator = payload.memoryProfilePerAllocator?.[id];
  if (!allocator) return null;
  const summary = allocator.profileSummary ?? {};
  const peak = summary.peakStats ?? {};
  const peakMiB = mib(peak.peakBytesInUse ?? toNumber(peak.heapAllocatedBytes) + toNumber(peak.stackReservedBytes));
  return {
    id,
    peakMiB,
    summary: [
      { label: 'Peak memory usage (profile lifetime)', value: formatMiB(mib(summary.peakBytesUsageLifetime)) },
      { label: 'Peak heap usage in the timeline', value: formatMiB(mib(peak.heapAllocatedBytes)) },
      { label: 'Stack reserved at peak', value: formatMiB(mib(peak.stackReservedBytes)) },
      { label: 'Free memory at peak', value: formatMiB(mib(peak.freeMemoryBytes)) },
      { label: 'Fragmentation at peak', value: `${(100 * toNumber(peak.fragmentation)).toFixed(1)}%` },
      { label: 'Time of peak', value: `${(toNumber(summary.peakStatsTimePs) / 1e9).toFixed(3)} ms` },
      { label: 'Memory capacity', value: formatMiB(mib(summary.memoryCapacity)) },
      allocationCounts(payload, id, allocator),
    ],
    timeline: timelineModel(allocator),
    breakdown: peakBreakdown(allocator),
  };
}

/**
 * Allocation / deallocation events: the server's counts over the whole profile, else (an
 * upstream payload) a count over the sampled timeline, labelled as such.
 */
function allocationCounts(payload: MemoryProfilePayload, id: string, allocator: PerAllocator): Metric {
  const counts = payload.allocatorEventCounts?.[id];
  if (counts) return { label: 'Allocations / deallocations', value: `${toNumber(counts.allocations)} / ${toNumber(counts.deallocations)}` };
  const snapshots = allocator.sampledTimelineSnapshots?.length ? allocator.sampledTimelineSnapshots : allocator.memoryProfileSnapshots ?? [];
  const count = (activity: string) => snapshots.filter((s) => s.activityMetadata?.memoryActivity === activity).length;
  return {
    label: `Allocations / deallocations in the ${snapshots.length} sampled events`,
    value: `${count('ALLOCATION')} / ${count('DEALLOCATION')}`,
  };
}


/** Tooltip text of one timeline point: the values and the event that produced it. */
export function timelineTooltip(point: TimelinePoint): string {
  const e = point.event;
  const lines = [
    `${point.timeMs.toFixed(3)} ms`,
    `Heap: ${formatMiB(point.heapMiB)} · Stack: ${formatMiB(point.stackMiB)} · Free: ${formatMiB(point.freeMiB)}`,
    `Fragmentation: ${point.fragmentationPercent.toFixed(1)}%`,
  ];
  if (e.memoryActivity) {
    lines.push(
      `${e.memoryActivity}: ${e.tfOpName || '(unknown op)'}`,
      `Requested ${formatBytes(toNumber(e.requestedBytes))}, allocated ${formatBytes(toNumber(e.allocationBytes))}`,
      `Region: ${e.regionType || '—'} · ${e.dataType || '—'} ${e.tensorShape || ''}`.trim(),
      `Step: ${e.stepId ?? '—'}`,
    );
  }
  return lines.join('\n');
}

/** The timeline as a chart model: stack, heap, free (stacked, MiB) and fragmentation (%). */
export function memoryChartModel(timeline: MemoryTimelineModel): TimelineChartModel {
  const p = timeline.points;
  return {
    xLabel: 'Time (ms)',
    leftLabel: 'Memory (MiB)',
    rightLabel: 'Fragmentation (%)',
    series: [
      { name: 'Stack', color: '#f59e0b', area: true, data: p.map((x) => [x.timeMs, x.stackMiB]) },
      { name: 'Heap', color: '#3b82f6', area: true, data: p.map((x) => [x.timeMs, x.heapMiB]) },
      { name: 'Free memory', color: '#10b981', area: true, hidden: timeline.hideFree, data: p.map((x) => [x.timeMs, x.freeMiB]) },
      { name: 'Fragmentation', color: '#e03131', area: false, rightAxis: true, data: p.map((x) => [x.timeMs, x.fragmentationPercent]) },
    ],
    tooltip: (index) => (p[index] ? timelineTooltip(p[index]) : ''),
  };
}
