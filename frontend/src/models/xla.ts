/**
 * The XLA tools' payloads as page models: memory_viewer (`PreprocessResult` proto-JSON), op_profile
 * (the op tree), graph_viewer (`type=graph` nodes and edges). Pure functions, tested on the
 * reference payloads in tests/data/reference.
 */
import type { DataTable } from '../table/datatable';
import type { Metric } from './overview';

export interface HeapObject {
  numbered?: number;
  label?: string;
  logicalBufferId?: number;
  logicalBufferSizeMib?: number;
  unpaddedShapeMib?: number;
  instructionName?: string;
  shapeString?: string;
  tfOpName?: string;
  groupName?: string;
  opCode?: string;
  sourceInfo?: { fileName?: string; lineNumber?: number };
}

export interface MemoryViewerPayload {
  moduleName?: string;
  heapSizes?: number[];
  unpaddedHeapSizes?: number[];
  hloInstructionNames?: string[];
  maxHeapBySize?: HeapObject[];
  peakHeapMib?: number;
  peakUnpaddedHeapMib?: number;
  peakHeapSizePosition?: number;
  entryComputationParametersMib?: number;
  maybeLiveOutMib?: number;
  totalBufferAllocationMib?: number;
  indefiniteBufferAllocationMib?: number;
}

export function isMemoryViewer(payload: unknown): payload is MemoryViewerPayload {
  return !!payload && typeof payload === 'object' && 'moduleName' in payload;
}

const mib = (value: number | undefined) => `${(value ?? 0).toFixed(2)} MiB`;

export interface HeapChartModel {
  /** Program-order step of each point. */
  steps: number[];
  heap: number[];
  unpadded: number[];
  /** The op each step belongs to (hover text). */
  ops: string[];
  peakStep: number;
  peakMib: number;
}

export interface PeakBar {
  name: string;
  sizeMib: number;
  detail: string;
}

export interface MemoryViewerModel {
  module: string;
  summary: Metric[];
  heap: HeapChartModel;
  peakBars: PeakBar[];
  peakTable: DataTable;
}

/** Most peak buffers drawn as bars; the table lists all. */
export const MAX_PEAK_BARS = 30;

export function memoryViewerModel(payload: MemoryViewerPayload): MemoryViewerModel {
  const heap = payload.heapSizes ?? [];
  const peak = payload.peakHeapMib ?? 0;
  const padding = peak - (payload.peakUnpaddedHeapMib ?? peak);
  const objects = payload.maxHeapBySize ?? [];
  return {
    module: payload.moduleName ?? '',
    summary: [
      { label: 'Peak memory', value: mib(peak), hint: `at step ${payload.peakHeapSizePosition ?? 0} of ${heap.length}` },
      { label: 'Padding at the peak', value: mib(padding) },
      { label: 'Parameters', value: mib(payload.entryComputationParametersMib) },
      { label: 'Outputs (may be live out)', value: mib(payload.maybeLiveOutMib) },
      { label: 'Total allocations', value: mib(payload.totalBufferAllocationMib) },
      { label: 'Buffers at the peak', value: String(objects.length) },
    ],
    heap: {
      steps: heap.map((_, i) => i),
      heap,
      unpadded: payload.unpaddedHeapSizes ?? heap,
      ops: payload.hloInstructionNames ?? [],
      peakStep: payload.peakHeapSizePosition ?? 0,
      peakMib: peak,
    },
    peakBars: objects.slice(0, MAX_PEAK_BARS).map((o) => ({
      name: o.instructionName || o.label || '',
      sizeMib: o.logicalBufferSizeMib ?? 0,
      detail: [o.shapeString, o.groupName, o.tfOpName].filter(Boolean).join(' · '),
    })),
    peakTable: peakTable(objects),
  };
}

const col = (id: string, label: string, type: string) => ({ id, label, type });

function peakTable(objects: HeapObject[]): DataTable {
  return {
    cols: [
      col('rank', 'Rank', 'number'),
      col('instruction_name', 'HLO op', 'string'),
      col('size_mib', 'Size (MiB)', 'number'),
      col('unpadded_mib', 'Unpadded size (MiB)', 'number'),
      col('padding_mib', 'Padding (MiB)', 'number'),
      col('shape', 'Shape', 'string'),
      col('category', 'Allocation type', 'string'),
      col('op_code', 'Op code', 'string'),
      col('tf_op_name', 'Framework op name', 'string'),
      col('source', 'Source', 'string'),
    ],
    rows: objects.map((o, i) => {
      const size = o.logicalBufferSizeMib ?? 0;
      const unpadded = o.unpaddedShapeMib ?? 0;
      const source = o.sourceInfo?.fileName ? `${o.sourceInfo.fileName}:${o.sourceInfo.lineNumber ?? 0}` : '';
      return {
        c: [
          { v: i + 1 },
          { v: o.instructionName || o.label || '' },
          { v: size },
          { v: unpadded },
          { v: unpadded ? Math.max(size - unpadded, 0) : 0 },
          { v: o.shapeString ?? '' },
          { v: o.groupName ?? '' },
          { v: o.opCode ?? '' },
          { v: o.tfOpName ?? '' },
          { v: source },
        ],
      };
    }),
  };
}

/** `name{1,2}` (a buffer of a tuple element) → `name`, the op to show in the graph viewer. */
export function opOfBuffer(name: string): string {
  return name.replace(/\{[\d,]*\}$/, '');
}

// --- op_profile ------------------------------------------------------------------------------
export interface OpNode {
  name: string;
  metrics?: { rawTime?: number; occurrences?: number; rawFlops?: number; flops?: number; bandwidthUtils?: number[] };
  children?: OpNode[];
  category?: object;
  xla?: { op?: string; expression?: string; provenance?: string; category?: string; programId?: string; module?: string };
}

export interface OpProfilePayload {
  byProgram?: OpNode;
  byProgramExcludeIdle?: OpNode;
  byCategory?: OpNode;
  byCategoryExcludeIdle?: OpNode;
  deviceType?: string;
}

export function isOpProfile(payload: unknown): payload is OpProfilePayload {
  return !!payload && typeof payload === 'object' && ('byProgram' in payload || 'byCategory' in payload);
}

export function opProfileRoot(payload: OpProfilePayload, withIdle: boolean): OpNode | undefined {
  if (payload.byProgram || payload.byProgramExcludeIdle) return withIdle ? payload.byProgram : payload.byProgramExcludeIdle;
  return withIdle ? payload.byCategory : payload.byCategoryExcludeIdle;
}

/** The node at `path` (names from the root), or the deepest node that exists along it. */
export function nodeAt(root: OpNode, path: readonly string[]): { node: OpNode; path: string[] } {
  let node = root;
  const found: string[] = [];
  for (const name of path) {
    const next = (node.children ?? []).find((c) => c.name === name);
    if (!next) break;
    node = next;
    found.push(name);
  }
  return { node, path: found };
}

export interface OpRow {
  name: string;
  timeMs: number;
  share: number;
  occurrences: number;
  /** FLOPs / self time (rawFlops over rawTime in ps), 0 without FLOPs. */
  gflops: number;
  hasChildren: boolean;
  isOp: boolean;
  module: string;
  expression: string;
  provenance: string;
}

export function childRows(node: OpNode, total: number): OpRow[] {
  return (node.children ?? []).map((c) => {
    const time = c.metrics?.rawTime ?? 0;
    return {
      name: c.name,
      timeMs: time / 1e9,
      share: total > 0 ? time / total : 0,
      occurrences: c.metrics?.occurrences ?? 0,
      gflops: time > 0 ? ((c.metrics?.rawFlops ?? 0) / time) * 1e3 : 0, // FLOP/ps → GFLOP/s
      hasChildren: (c.children ?? []).length > 0,
      isOp: !!c.xla?.op,
      module: c.xla?.module ?? '',
      expression: c.xla?.expression ?? '',
      provenance: c.xla?.provenance ?? '',
    };
  });
}

// --- graph_viewer ----------------------------------------------------------------------------
export interface GraphNode {
  name: string;
  opcode: string;
  shape: string;
  category?: string;
  tfOp?: string;
  depth?: number;
  fusion?: { computation: string; size: number; nodes?: GraphNode[]; edges?: GraphEdge[] };
}

export interface GraphEdge {
  from: string;
  to: string;
}

export interface GraphPayload {
  module: string;
  computation: string;
  center: string;
  depth: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  truncated: boolean;
}

export function isGraph(payload: unknown): payload is GraphPayload {
  return !!payload && typeof payload === 'object' && 'nodes' in payload && 'edges' in payload;
}
